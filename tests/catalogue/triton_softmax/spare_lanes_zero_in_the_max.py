"""Mistake: the spare lanes load as 0.0 and are masked out of the sum, but not out of the max:
a row whose values are all far below 0 gets 0 for its max, every exp(x − 0) underflows to 0,
and y is 0 / 0. Right for every row that holds a value above 0, or has no spare lanes.
"""

import torch
import triton
import triton.language as tl

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block

EXPECT = "test_negative_rows"


@triton.jit
def _softmax_fwd(X, Y, stride_x, stride_y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    X += row * stride_x
    Y += row * stride_y
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    s = 0.0
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        x = tl.load(X + start + cols, mask=mask, other=0.0).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        e = tl.where(mask, tl.exp(x - m_new), 0.0)
        s = s * tl.exp(m - m_new) + tl.sum(e, axis=0)
        m = m_new
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        x = tl.load(X + start + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + start + cols, (tl.exp(x - m) / s).to(Y.dtype.element_ty), mask=mask)


class SoftmaxFunction(Reference):
    @staticmethod
    def forward(ctx, x):
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        y = torch.empty(x2d.shape, dtype=x.dtype, device=x.device)
        _softmax_fwd[(x2d.shape[0],)](x2d, y, x2d.stride(0), y.stride(0), n, BLOCK=_block(n))
        ctx.save_for_backward(y)
        return y.view(x.shape)


def softmax(x):
    return SoftmaxFunction.apply(x)
