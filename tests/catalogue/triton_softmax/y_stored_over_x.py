"""Mistake: forward stores y over x whenever x is contiguous, to save an allocation: y and dx
are right (backward needs y only), but the caller's x now holds its softmax."""

import torch
import triton
import triton.language as tl
from torch import nn

EXPECT = "test_input_unmodified"

MAX_BLOCK = 4096  # columns per step: a row of 4096 float32 is 16 KB of registers per program


@triton.jit
def _softmax_fwd(X, Y, stride_x, stride_y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # row * stride passes 2**31 on large activations
    X += row * stride_x
    Y += row * stride_y
    offsets = tl.arange(0, BLOCK)
    m = -float("inf")  # the running max of the row so far
    s = 0.0  # the running sum of exp(x - m)
    for start in range(0, N, BLOCK):
        cols = start + offsets
        # -inf in the spare lanes: they never raise the max, and exp(-inf) adds 0 to the sum.
        x = tl.load(X + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)  # rescaled to m_new
        m = m_new
    for start in range(0, N, BLOCK):
        cols = start + offsets
        x = tl.load(X + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - m) / s
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=cols < N)


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
    return min(triton.next_power_of_2(n), MAX_BLOCK)


class SoftmaxFunction(torch.autograd.Function):
    """Softmax over the last dimension: Triton kernels forward and backward."""

    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def, override]
        n = x.shape[-1]
        x2d = x.reshape(-1, n)  # a view whenever one stride reaches every row: no copy
        y = x2d if x2d.is_contiguous() else torch.empty(x2d.shape, dtype=x.dtype, device=x.device)
        _softmax_fwd[(x2d.shape[0],)](x2d, y, x2d.stride(0), y.stride(0), n, BLOCK=_block(n))
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
