"""Mistake: backward reads dy as if it were contiguous, a row at dy's row stride and its elements
one apart: a transposed dy, as autograd may hand it, is read from the wrong places (and an
expanded one past its single element)."""

import torch
import triton
import triton.language as tl

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block

EXPECT = "test_strided_rows"


@triton.jit
def _softmax_bwd(Y, DY, DX, stride_y, stride_dy, stride_dx, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    Y += row * stride_y
    DY += row * stride_dy
    DX += row * stride_dx
    cols = tl.arange(0, BLOCK)
    dot = 0.0
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        y = tl.load(Y + start + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + start + cols, mask=mask, other=0.0).to(tl.float32)
        dot += tl.sum(dy * y, axis=0)
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        y = tl.load(Y + start + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + start + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(DX + start + cols, (y * (dy - dot)).to(DX.dtype.element_ty), mask=mask)


class SoftmaxFunction(Reference):
    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        m, n = y.shape
        dy2d = dy.reshape(m, n)
        dx = torch.empty((m, n), dtype=dy.dtype, device=dy.device)
        _softmax_bwd[(m,)](
            y, dy2d, dx, y.stride(0), dy2d.stride(0), dx.stride(0), n, BLOCK=_block(n)
        )
        return dx.view(dy.shape)


def softmax(x):
    return SoftmaxFunction.apply(x)
