"""Mistake: launches one program per element of x's first dimension, as if x were 2-D: for
x of shape (B, T, N) only B of the B · T rows are computed."""

import torch

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block, _softmax_fwd

EXPECT = "test_leading_dims"


class SoftmaxFunction(Reference):
    @staticmethod
    def forward(ctx, x):
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        y = torch.empty(x2d.shape, dtype=x.dtype, device=x.device)
        _softmax_fwd[(x.shape[0],)](x2d, y, x2d.stride(0), y.stride(0), n, BLOCK=_block(n))
        ctx.save_for_backward(y)
        return y.view(x.shape)


def softmax(x):
    return SoftmaxFunction.apply(x)
