"""Mistake: forward saves x, not its output, and backward computes the softmax of x a second
time in its kernel (the max and the sum again) before dx: the right gradient, for another pass
through x, where y alone would do."""

import torch
import triton
import triton.language as tl

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block, _softmax_fwd

EXPECT = "test_saves_output_for_backward"


@triton.jit
def _softmax_bwd_from_x(
    X, DY, DX, stride_x, stride_dy, stride_dy_col, stride_dx, N, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    X += row * stride_x
    DY += row * stride_dy
    DX += row * stride_dx
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    s = 0.0
    for start in range(0, N, BLOCK):
        x = tl.load(X + start + cols, mask=start + cols < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    dot = 0.0
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        x = tl.load(X + start + cols, mask=mask, other=-float("inf")).to(tl.float32)
        dy = tl.load(DY + (start + cols) * stride_dy_col, mask=mask, other=0.0).to(tl.float32)
        dot += tl.sum(dy * tl.exp(x - m) / s, axis=0)
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        x = tl.load(X + start + cols, mask=mask, other=-float("inf")).to(tl.float32)
        dy = tl.load(DY + (start + cols) * stride_dy_col, mask=mask, other=0.0).to(tl.float32)
        y = tl.exp(x - m) / s
        tl.store(DX + start + cols, (y * (dy - dot)).to(DX.dtype.element_ty), mask=mask)


class SoftmaxFunction(Reference):
    @staticmethod
    def forward(ctx, x):
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        y = torch.empty(x2d.shape, dtype=x.dtype, device=x.device)
        _softmax_fwd[(x2d.shape[0],)](x2d, y, x2d.stride(0), y.stride(0), n, BLOCK=_block(n))
        ctx.save_for_backward(x2d)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        (x2d,) = ctx.saved_tensors
        m, n = x2d.shape
        dy2d = dy.reshape(m, n)
        dx = torch.empty((m, n), dtype=dy.dtype, device=dy.device)
        _softmax_bwd_from_x[(m,)](
            x2d, dy2d, dx, x2d.stride(0), *dy2d.stride(), dx.stride(0), n, BLOCK=_block(n)
        )
        return dx.view(dy.shape)


def softmax(x):
    return SoftmaxFunction.apply(x)
