"""Mistake: exp2 in place of exp, for speed, without scaling x by log2(e) first: the kernel
computes 2^(x − m) / Σ 2^(x − m), the softmax of x · ln 2, not of x."""

import torch
import triton
import triton.language as tl

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block

EXPECT = "test_forward_formula"
ALSO = (
    "test_max_subtracted, "
    "test_negative_rows, "
    "test_sum_rescaled_when_the_max_grows, "
    "test_wide_rows, "
    "test_non_power_of_two_width, "
    "test_strided_rows, "
    "test_leading_dims, "
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
        x = tl.load(X + start + cols, mask=start + cols < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp2(m - m_new) + tl.sum(tl.exp2(x - m_new), axis=0)
        m = m_new
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        x = tl.load(X + start + cols, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(Y + start + cols, (tl.exp2(x - m) / s).to(Y.dtype.element_ty), mask=mask)


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
