"""Mistake: backward subtracts the mean of dy along the row, as LayerNorm's backward does, where
softmax's subtracts Σ dy · y: dx = y · (dy − mean(dy)). Right when dy is the same along a row
(both are then that constant), wrong for any other dy."""

import torch
import triton
import triton.language as tl

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block

EXPECT = "test_backward_formula"
ALSO = "test_wide_rows, test_strided_rows, test_leading_dims, test_half_precision"


@triton.jit
def _softmax_bwd(Y, DY, DX, stride_y, stride_dy, stride_dy_col, stride_dx, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    Y += row * stride_y
    DY += row * stride_dy
    DX += row * stride_dx
    cols = tl.arange(0, BLOCK)
    total = 0.0
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        dy = tl.load(DY + (start + cols) * stride_dy_col, mask=mask, other=0.0).to(tl.float32)
        total += tl.sum(dy, axis=0)
    mean = total / N
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        y = tl.load(Y + start + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + (start + cols) * stride_dy_col, mask=mask, other=0.0).to(tl.float32)
        tl.store(DX + start + cols, (y * (dy - mean)).to(DX.dtype.element_ty), mask=mask)


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
