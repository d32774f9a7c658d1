"""Mistake: no mask on the loads and the stores, so the spare lanes of the last block of a row
read and write past it: into the next row, and past the end of x, y, dy and dx in the last."""

import torch
import triton
import triton.language as tl

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block

EXPECT = "test_masked_tail"
# Compiled, reads past a tensor go unseen and loads are not counted: the stores past the end of
# y and dx still land in their fences.
COMPILED = "test_masked_tail"
ALSO = (
    "test_reads_x_at_most_twice, "
    "test_max_subtracted, "
    "test_negative_rows, "
    "test_sum_rescaled_when_the_max_grows, "
    "test_wide_rows, "
    "test_race_free, "
    "test_non_power_of_two_width, "
    "test_backward_formula, "
    "test_strided_rows, "
    "test_half_precision"
)


@triton.jit
def _softmax_fwd(X, Y, stride_x, stride_y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    X += row * stride_x
    Y += row * stride_y
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    s = 0.0
    for start in range(0, N, BLOCK):
        x = tl.load(X + start + cols).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for start in range(0, N, BLOCK):
        x = tl.load(X + start + cols).to(tl.float32)
        tl.store(Y + start + cols, (tl.exp(x - m) / s).to(Y.dtype.element_ty))


@triton.jit
def _softmax_bwd(Y, DY, DX, stride_y, stride_dy, stride_dy_col, stride_dx, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    Y += row * stride_y
    DY += row * stride_dy
    DX += row * stride_dx
    cols = tl.arange(0, BLOCK)
    dot = 0.0
    for start in range(0, N, BLOCK):
        y = tl.load(Y + start + cols).to(tl.float32)
        dy = tl.load(DY + (start + cols) * stride_dy_col).to(tl.float32)
        dot += tl.sum(dy * y, axis=0)
    for start in range(0, N, BLOCK):
        y = tl.load(Y + start + cols).to(tl.float32)
        dy = tl.load(DY + (start + cols) * stride_dy_col).to(tl.float32)
        tl.store(DX + start + cols, (y * (dy - dot)).to(DX.dtype.element_ty))


class SoftmaxFunction(Reference):
    @staticmethod
    def forward(ctx, x):
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        y = torch.empty(x2d.shape, dtype=x.dtype, device=x.device)
        _softmax_fwd[(x2d.shape[0],)](x2d, y, x2d.stride(0), y.stride(0), n, BLOCK=_block(n))
        ctx.save_for_backward(y)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        m, n = y.shape
        dy2d = dy.reshape(m, n)
        dx = torch.empty((m, n), dtype=dy.dtype, device=dy.device)
        _softmax_bwd[(m,)](
            y, dy2d, dx, y.stride(0), *dy2d.stride(), dx.stride(0), n, BLOCK=_block(n)
        )
        return dx.view(dy.shape)


def softmax(x):
    return SoftmaxFunction.apply(x)
