"""Correct, written differently: persistent grids. Forward and backward launch at most PROGRAMS
programs, each taking rows pid, pid + P, pid + 2P, ... (P the grid's size) in a loop whose
variable is widened to int64 for the row offsets; in backward each program adds its rows into
a partial row of its own, so that there are P partial rows, not the reference's M / 4 or the
tutorial's 256, and no two programs share one.
"""

import torch
import triton
import triton.language as tl
from torch import nn

EXPECT = "pass"

PROGRAMS = 64  # a persistent grid: at most this many programs, whatever the number of rows
BLOCK_P = 16  # partial rows summed per step of the second pass
BLOCK_COLS = 64  # columns per program of the second pass


@triton.jit
def _fwd(X, Y, W, B, Mean, Rstd, stride_x, stride_y, M, N, eps, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    for row in tl.range(tl.program_id(0), M, tl.num_programs(0)):
        r = row.to(tl.int64)  # r * stride passes 2**31 on large activations
        x = tl.load(X + r * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / N
        xc = tl.where(mask, x - mean, 0.0)
        rstd = tl.rsqrt(tl.sum(xc * xc, axis=0) / N + eps)
        tl.store(Mean + r, mean)
        tl.store(Rstd + r, rstd)
        tl.store(Y + r * stride_y + cols, (xc * rstd * w + b).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _bwd_dx(
    X, DY, DX, W, Mean, Rstd, DW_partial, DB_partial,
    stride_x, stride_dy, stride_dy_col, stride_dx, M, N,
    BLOCK_N: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK_N,), dtype=tl.float32)
    db = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for row in range(pid, M, tl.num_programs(0)):
        r = row.to(tl.int64)
        x = tl.load(X + r * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        dy_at = DY + r * stride_dy + cols * stride_dy_col
        dy = tl.load(dy_at, mask=mask, other=0.0).to(tl.float32)
        xhat = tl.where(mask, (x - tl.load(Mean + r)) * tl.load(Rstd + r), 0.0)
        g = dy * w
        c1 = tl.sum(xhat * g, axis=0) / N
        c2 = tl.sum(g, axis=0) / N
        dx = (g - c2 - xhat * c1) * tl.load(Rstd + r)
        tl.store(DX + r * stride_dx + cols, dx.to(DX.dtype.element_ty), mask=mask)
        dw += dy * xhat
        db += dy
    tl.store(DW_partial + pid * N + cols, dw, mask=mask)  # this program's own partial row
    tl.store(DB_partial + pid * N + cols, db, mask=mask)


@triton.jit
def _bwd_dwdb(
    DW_partial, DB_partial, DW, DB, P, N, BLOCK_P: tl.constexpr, BLOCK_COLS: tl.constexpr
):
    cols = tl.program_id(0) * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    dw = tl.zeros((BLOCK_COLS,), dtype=tl.float32)
    db = tl.zeros((BLOCK_COLS,), dtype=tl.float32)
    for first in range(0, P, BLOCK_P):
        rows = first + tl.arange(0, BLOCK_P)
        mask = (rows[:, None] < P) & (cols[None, :] < N)
        offsets = rows[:, None] * N + cols[None, :]
        dw += tl.sum(tl.load(DW_partial + offsets, mask=mask, other=0.0), axis=0)
        db += tl.sum(tl.load(DB_partial + offsets, mask=mask, other=0.0), axis=0)
    tl.store(DW + cols, dw.to(DW.dtype.element_ty), mask=cols < N)
    tl.store(DB + cols, db.to(DB.dtype.element_ty), mask=cols < N)


class LayerNormFunction(torch.autograd.Function):
    """LayerNorm over the last dimension: persistent Triton kernels forward and backward."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):  # type: ignore[no-untyped-def, override]
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        m = x2d.shape[0]
        y = torch.empty((m, n), dtype=x.dtype, device=x.device)
        mean = torch.empty(m, dtype=torch.float32, device=x.device)
        rstd = torch.empty(m, dtype=torch.float32, device=x.device)
        block_n = triton.next_power_of_2(n)
        _fwd[(min(m, PROGRAMS),)](
            x2d, y, weight, bias, mean, rstd, x2d.stride(0), y.stride(0), m, n, eps,
            BLOCK_N=block_n,
        )  # fmt: skip
        ctx.save_for_backward(x2d, weight, mean, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):  # type: ignore[no-untyped-def, override]
        x2d, weight, mean, rstd = ctx.saved_tensors
        m, n = x2d.shape
        dy2d = dy.reshape(m, n)
        dx = torch.empty((m, n), dtype=dy.dtype, device=dy.device)
        p = min(m, PROGRAMS)  # programs, one partial row each
        dw_partial = torch.empty((p, n), dtype=torch.float32, device=dy.device)
        db_partial = torch.empty((p, n), dtype=torch.float32, device=dy.device)
        block_n = triton.next_power_of_2(n)
        _bwd_dx[(p,)](
            x2d, dy2d, dx, weight, mean, rstd, dw_partial, db_partial,
            x2d.stride(0), *dy2d.stride(), dx.stride(0), m, n,
            BLOCK_N=block_n,
        )  # fmt: skip
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        _bwd_dwdb[(triton.cdiv(n, BLOCK_COLS),)](
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
