"""Mistake: forward divides the centred sum of squares by N - 1 (torch.var's default, unbiased)
instead of N: nn.LayerNorm uses the biased variance."""

import torch
import triton
import triton.language as tl
from torch import nn

EXPECT = "test_forward_formula"
ALSO = (
    "test_grad_x_through_the_variance, "
    "test_grad_x, "
    "test_grad_weight_and_bias, "
    "test_reduction_keeps_every_row, "
    "test_half_precision, "
    "test_wide_rows"
)

ROWS = 4


@triton.jit
def _layer_norm_fwd(
    X, Y, W, B, Mean, Rstd, M, N, stride_x, stride_y, eps, ROWS: tl.constexpr, BLOCK_N: tl.constexpr
):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    rmask = rows < M
    cmask = cols < N
    mask = rmask[:, None] & cmask[None, :]
    r64 = rows.to(tl.int64)[:, None]
    x = tl.load(X + r64 * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / N
    xc = tl.where(mask, x - mean[:, None], 0.0)
    var = tl.sum(xc * xc, axis=1) / (N - 1)
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(Mean + rows, mean, mask=rmask)
    tl.store(Rstd + rows, rstd, mask=rmask)
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=cmask, other=0.0).to(tl.float32)
    y = xc * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(Y + r64 * stride_y + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _layer_norm_bwd_dx(
    X,
    DY,
    DX,
    W,
    Mean,
    Rstd,
    DWp,
    DBp,
    M,
    N,
    stride_x,
    stride_dy_r,
    stride_dy_c,
    stride_dx,
    ROWS: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    rmask = rows < M
    cmask = cols < N
    mask = rmask[:, None] & cmask[None, :]
    r64 = rows.to(tl.int64)[:, None]
    x = tl.load(X + r64 * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(DY + r64 * stride_dy_r + cols[None, :] * stride_dy_c, mask=mask, other=0.0).to(
        tl.float32
    )
    mean = tl.load(Mean + rows, mask=rmask, other=0.0)
    rstd = tl.load(Rstd + rows, mask=rmask, other=0.0)
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    xhat = tl.where(mask, (x - mean[:, None]) * rstd[:, None], 0.0)
    g = dy * w[None, :]
    c1 = tl.sum(xhat * g, axis=1) / N
    c2 = tl.sum(g, axis=1) / N
    dx = (g - c2[:, None] - xhat * c1[:, None]) * rstd[:, None]
    tl.store(DX + r64 * stride_dx + cols[None, :], dx.to(DX.dtype.element_ty), mask=mask)
    tl.store(DWp + pid * N + cols, tl.sum(dy * xhat, axis=0), mask=cmask)
    tl.store(DBp + pid * N + cols, tl.sum(dy, axis=0), mask=cmask)


@triton.jit
def _layer_norm_bwd_dwdb(DWp, DBp, DW, DB, P, N, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < N
    dw = tl.zeros((BLOCK_C,), dtype=tl.float32)
    db = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for p in range(0, P):
        dw += tl.load(DWp + p * N + cols, mask=cmask, other=0.0)
        db += tl.load(DBp + p * N + cols, mask=cmask, other=0.0)
    tl.store(DW + cols, dw.to(DW.dtype.element_ty), mask=cmask)
    tl.store(DB + cols, db.to(DB.dtype.element_ty), mask=cmask)


def _rows(block_n):
    return ROWS if block_n <= 1024 else 1


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        m = x2d.shape[0]
        y = x2d.new_empty((m, n))
        mean = x2d.new_empty((m,), dtype=torch.float32)
        rstd = x2d.new_empty((m,), dtype=torch.float32)
        block_n = triton.next_power_of_2(n)
        rows = _rows(block_n)
        _layer_norm_fwd[(triton.cdiv(m, rows),)](
            x2d,
            y,
            weight,
            bias,
            mean,
            rstd,
            m,
            n,
            x2d.stride(0),
            y.stride(0),
            eps,
            ROWS=rows,
            BLOCK_N=block_n,
        )
        ctx.save_for_backward(x2d, weight, mean, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x2d, weight, mean, rstd = ctx.saved_tensors
        m, n = x2d.shape
        dy2d = dy.reshape(m, n)
        dx = torch.empty((m, n), dtype=dy.dtype, device=dy.device)
        block_n = triton.next_power_of_2(n)
        rows = _rows(block_n)
        p = triton.cdiv(m, rows)
        dwp = torch.empty((p, n), dtype=torch.float32, device=dy.device)
        dbp = torch.empty((p, n), dtype=torch.float32, device=dy.device)
        _layer_norm_bwd_dx[(p,)](
            x2d,
            dy2d,
            dx,
            weight,
            mean,
            rstd,
            dwp,
            dbp,
            m,
            n,
            x2d.stride(0),
            dy2d.stride(0),
            dy2d.stride(1),
            dx.stride(0),
            ROWS=rows,
            BLOCK_N=block_n,
        )
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        _layer_norm_bwd_dwdb[(triton.cdiv(n, 64),)](dwp, dbp, dw, db, p, n, BLOCK_C=64)
        return dx.view(dy.shape), dw, db, None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.normalized_shape = (normalized_shape,)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        return layer_norm(x, self.weight, self.bias, self.eps)
