"""Mistake: backward computes dx = y · dy, without the Σ dy · y term: the gradient through the
sum that normalizes each row is lost. dx no longer sums to 0 along a row."""

import torch
import triton
import triton.language as tl

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block

EXPECT = "test_grad_through_the_sum"
ALSO = (
    "test_wide_rows, "
    "test_backward_formula, "
    "test_strided_rows, "
    "test_leading_dims, "
    "test_half_precision"
)


@triton.jit
def _softmax_bwd(Y, DY, DX, stride_y, stride_dy, stride_dy_col, stride_dx, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        y = tl.load(Y + row * stride_y + start + cols, mask=mask, other=0.0).to(tl.float32)
        dy_at = DY + row * stride_dy + (start + cols) * stride_dy_col
        dy = tl.load(dy_at, mask=mask, other=0.0).to(tl.float32)
        tl.store(DX + row * stride_dx + start + cols, (y * dy).to(DX.dtype.element_ty), mask=mask)


class SoftmaxFunction(Reference):
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
