"""Mistake: forward returns y as rows of N, not in x's shape."""

import torch

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block, _softmax_fwd

EXPECT = "test_gradient_shapes"
ALSO = "test_leading_dims"


class SoftmaxFunction(Reference):
    @staticmethod
    def forward(ctx, x):
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        y = torch.empty(x2d.shape, dtype=x.dtype, device=x.device)
        _softmax_fwd[(x2d.shape[0],)](x2d, y, x2d.stride(0), y.stride(0), n, BLOCK=_block(n))
        ctx.save_for_backward(y)
        return y


def softmax(x):
    return SoftmaxFunction.apply(x)
