"""Mistake: forward stores y over x whenever x is contiguous, to save an allocation: the caller's
x now holds y, and backward, which saved x, computes dx from y."""

import torch
import triton
import triton.language as tl
from torch import nn

EXPECT = "test_input_unmodified"
ALSO = (
    "test_kernels_do_the_work, "
    "test_gradient_shapes, "
    "test_masked_tail, "
    "test_grad_x_through_the_mean, "
    "test_grad_x_through_the_variance, "
    "test_grad_x, "
    "test_grad_weight_and_bias, "
    "test_reduction_keeps_every_row, "
    "test_reduction_race_free, "
    "test_half_precision, "
    "test_wide_rows"
)

# Partial rows of dweight and dbias: enough programs to fill a GPU's SMs, few enough that the
# second pass reads little (P x N floats against M x N for x).
PARTIALS = 256
# Rows per program at least: with one partial row per row, the second pass would read as much
# as dy itself (P x N floats against M x N).
MIN_ROWS = 4
BLOCK_P = 8  # partial rows summed per step of the second pass
BLOCK_COLS = 128  # columns per program of the second pass


@triton.jit
def _layer_norm_fwd(
    X,  # input, rows stride_x apart
    Y,  # output, rows stride_y apart
    W,  # weight, N contiguous elements
    B,  # bias, N contiguous elements
    Mean,  # (M,) float32
    Rstd,  # (M,) float32
    stride_x,
    stride_y,
    N,
    eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)  # row * stride passes 2**31 on large activations
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N  # N, not BLOCK_N: the masked lanes are zeros, not data
    xc = tl.where(mask, x - mean, 0.0)  # the spare lanes would add mean² to the variance
    var = tl.sum(xc * xc, axis=0) / N  # biased, as nn.LayerNorm
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    y = xc * rstd * w + b
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _layer_norm_bwd_dx(
    X,
    DY,
    DX,
    W,
    Mean,
    Rstd,
    DW_partial,  # (P, N) float32: row p is program p's sum over its rows
    DB_partial,
    stride_x,
    stride_dy,  # dy's rows, and its columns: autograd may hand an expanded or transposed dy
    stride_dy_col,
    stride_dx,
    M,
    N,
    rows_per_program,
    BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK_N,), dtype=tl.float32)
    db = tl.zeros((BLOCK_N,), dtype=tl.float32)
    first = pid.to(tl.int64) * rows_per_program  # int64: the row offsets below pass 2**31
    last = tl.minimum(first + rows_per_program, M)
    for row in range(first, last):
        x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        dy_at = DY + row * stride_dy + cols * stride_dy_col
        dy = tl.load(dy_at, mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(Mean + row)
        rstd = tl.load(Rstd + row)
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        g = dy * w  # the gradient reaching x̂
        # dx = rstd (g - mean(g) - x̂ mean(g x̂)): the two means are the paths through μ and σ².
        c1 = tl.sum(xhat * g, axis=0) / N
        c2 = tl.sum(g, axis=0) / N
        dx = (g - c2 - xhat * c1) * rstd
        tl.store(DX + row * stride_dx + cols, dx.to(DX.dtype.element_ty), mask=mask)
        dw += dy * xhat
        db += dy
    tl.store(DW_partial + pid * N + cols, dw, mask=mask)
    tl.store(DB_partial + pid * N + cols, db, mask=mask)


@triton.jit
def _layer_norm_bwd_dwdb(
    DW_partial,
    DB_partial,
    DW,
    DB,
    P,  # rows of the partial buffers
    N,
    BLOCK_P: tl.constexpr,
    BLOCK_COLS: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = pid * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    dw = tl.zeros((BLOCK_P, BLOCK_COLS), dtype=tl.float32)
    db = tl.zeros((BLOCK_P, BLOCK_COLS), dtype=tl.float32)
    for i in range(0, P, BLOCK_P):  # the last step is partly past P: the mask keeps it in
        rows = i + tl.arange(0, BLOCK_P)
        mask = (rows[:, None] < P) & (cols[None, :] < N)
        offsets = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW_partial + offsets, mask=mask, other=0.0)
        db += tl.load(DB_partial + offsets, mask=mask, other=0.0)
    tl.store(DW + cols, tl.sum(dw, axis=0).to(DW.dtype.element_ty), mask=cols < N)
    tl.store(DB + cols, tl.sum(db, axis=0).to(DB.dtype.element_ty), mask=cols < N)


def _warps(block_n: int) -> int:
    return min(max(block_n // 256, 1), 8)


class LayerNormFunction(torch.autograd.Function):
    """LayerNorm over the last dimension: Triton kernels forward and backward."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):  # type: ignore[no-untyped-def, override]
        n = x.shape[-1]
        x2d = x.reshape(-1, n)  # a view whenever one stride reaches every row: no copy
        m = x2d.shape[0]
        y = x2d if x2d.is_contiguous() else torch.empty((m, n), dtype=x.dtype, device=x.device)
        mean = torch.empty(m, dtype=torch.float32, device=x.device)
        rstd = torch.empty(m, dtype=torch.float32, device=x.device)
        block_n = triton.next_power_of_2(n)
        _layer_norm_fwd[(m,)](
            x2d, y, weight, bias, mean, rstd, x2d.stride(0), y.stride(0), n, eps,
            BLOCK_N=block_n, num_warps=_warps(block_n),
        )  # fmt: skip
        ctx.save_for_backward(x2d, weight, mean, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):  # type: ignore[no-untyped-def, override]
        x2d, weight, mean, rstd = ctx.saved_tensors
        m, n = x2d.shape
        dy2d = dy.reshape(m, n)  # a view: y.sum()'s dy is expanded (strides 0), still one view
        dx = torch.empty((m, n), dtype=dy.dtype, device=dy.device)
        rows_per_program = max(triton.cdiv(m, PARTIALS), MIN_ROWS)
        p = triton.cdiv(m, rows_per_program)  # programs, one partial row each
        dw_partial = torch.empty((p, n), dtype=torch.float32, device=dy.device)
        db_partial = torch.empty((p, n), dtype=torch.float32, device=dy.device)
        block_n = triton.next_power_of_2(n)
        _layer_norm_bwd_dx[(p,)](
            x2d, dy2d, dx, weight, mean, rstd, dw_partial, db_partial,
            x2d.stride(0), *dy2d.stride(), dx.stride(0), m, n, rows_per_program,
            BLOCK_N=block_n, num_warps=_warps(block_n),
        )  # fmt: skip
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        _layer_norm_bwd_dwdb[(triton.cdiv(n, BLOCK_COLS),)](
            dw_partial, db_partial, dw, db, p, n, BLOCK_P=BLOCK_P, BLOCK_COLS=BLOCK_COLS
        )
        return dx.view(dy.shape), dw, db, None


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """LayerNorm of x over its last dimension, through LayerNormFunction."""
    return LayerNormFunction.apply(x, weight, bias, eps)


class LayerNorm(nn.Module):
    """nn.LayerNorm over the last dimension, computed by the Triton kernels above."""

    def __init__(self, normalized_shape: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.normalized_shape = (normalized_shape,)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm(x, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"
