"""Mistake: splits a row across programs only when it is wider than one block of 65536 (a
grid of rows by column blocks), and then each program merges its block's max and sum into the
row's running max and sum with plain loads and stores, no atomic and no lock: on a GPU the
programs of such a row run at the same time and one's merge is lost. Rows up to 65536 take one
program each, so the race check's row of 10000 has none; the wide rows of other checks do."""

import torch
import triton
import triton.language as tl
from torch import nn

EXPECT = "test_race_free"
ALSO = "test_max_subtracted, test_sum_rescaled_when_the_max_grows, test_wide_rows"
SAYS = "(passed as M) is shared by"

MAX_BLOCK = 65536  # the widest block: wider rows are split across programs


@triton.jit
def _block_stats(X, M, S, stride_x, N, BLOCK: tl.constexpr):
    # One program per (row, block of columns): the block's max and sum, merged into the row's.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + row * stride_x + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
    bm = tl.max(x, axis=0)
    bs = tl.sum(tl.exp(x - bm), axis=0)
    m = tl.load(M + row)
    s = tl.load(S + row)
    m_new = tl.maximum(m, bm)
    tl.store(S + row, s * tl.exp(m - m_new) + bs * tl.exp(bm - m_new))
    tl.store(M + row, m_new)


@triton.jit
def _softmax_fwd(X, Y, M, S, stride_x, stride_y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + row * stride_x + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
    y = tl.exp(x - tl.load(M + row)) / tl.load(S + row)
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=cols < N)


@triton.jit
def _softmax_bwd(Y, DY, DX, stride_y, stride_dy, stride_dy_col, stride_dx, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    Y += row * stride_y
    DY += row * stride_dy  # dy may be transposed or expanded: both of its strides
    DX += row * stride_dx
    offsets = tl.arange(0, BLOCK)
    dot = 0.0  # Σ dy · y over the row
    for start in range(0, N, BLOCK):
        cols = start + offsets
        y = tl.load(Y + cols, mask=cols < N, other=0.0).to(tl.float32)
        dy = tl.load(DY + cols * stride_dy_col, mask=cols < N, other=0.0).to(tl.float32)
        dot += tl.sum(dy * y, axis=0)
    for start in range(0, N, BLOCK):
        cols = start + offsets
        y = tl.load(Y + cols, mask=cols < N, other=0.0).to(tl.float32)
        dy = tl.load(DY + cols * stride_dy_col, mask=cols < N, other=0.0).to(tl.float32)
        dx = y * (dy - dot)
        tl.store(DX + cols, dx.to(DX.dtype.element_ty), mask=cols < N)


def _block(n: int) -> int:
    # A row that fits one block has one program; a wider one is split into blocks of 65536.
    return triton.next_power_of_2(n) if n <= MAX_BLOCK else MAX_BLOCK


class SoftmaxFunction(torch.autograd.Function):
    """Softmax over the last dimension: Triton kernels forward and backward."""

    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def, override]
        n = x.shape[-1]
        x2d = x.reshape(-1, n)  # a view whenever one stride reaches every row: no copy
        y = torch.empty(x2d.shape, dtype=x.dtype, device=x.device)
        block = _block(n)
        grid = (x2d.shape[0], triton.cdiv(n, block))
        m = torch.full((x2d.shape[0],), -float("inf"), dtype=torch.float32, device=x.device)
        s = torch.zeros(x2d.shape[0], dtype=torch.float32, device=x.device)
        _block_stats[grid](x2d, m, s, x2d.stride(0), n, BLOCK=block)
        _softmax_fwd[grid](x2d, y, m, s, x2d.stride(0), y.stride(0), n, BLOCK=block)
        ctx.save_for_backward(y)  # backward needs the output, not x
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):  # type: ignore[no-untyped-def, override]
        (y,) = ctx.saved_tensors
        m, n = y.shape
        dy2d = dy.reshape(m, n)  # a view: y.sum()'s dy is expanded (strides 0), still one view
        dx = torch.empty((m, n), dtype=dy.dtype, device=dy.device)
        _softmax_bwd[(m,)](
            y, dy2d, dx, y.stride(0), *dy2d.stride(), dx.stride(0), n, BLOCK=_block(n)
        )
        return dx.view(dy.shape)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax of x over its last dimension, through SoftmaxFunction."""
    return SoftmaxFunction.apply(x)


class Softmax(nn.Module):
    """nn.Softmax(dim=-1), computed by the Triton kernels above."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax(x)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
