"""Mistake: backward writes dx over dy whenever dy is contiguous, to save memory. The values are
right, but the caller's dy is gone: y.backward(dy) leaves dy holding dx, and autograd may hand
the same tensor to other layers. Only the parity check, which hands dy through autograd and
looks at it after, sees it.
"""

from torch import nn

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block, _softmax_bwd

EXPECT = "test_module_like_nn_softmax"


class SoftmaxFunction(Reference):
    @staticmethod
    def backward(ctx, dy):
        if not dy.is_contiguous():
            return Reference.backward(ctx, dy)
        (y,) = ctx.saved_tensors
        m, n = y.shape
        dy2d = dy.view(m, n)
        _softmax_bwd[(m,)](
            y, dy2d, dy2d, y.stride(0), *dy2d.stride(), dy2d.stride(0), n, BLOCK=_block(n)
        )
        return dy


def softmax(x):
    return SoftmaxFunction.apply(x)


class Softmax(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.dim = -1

    def forward(self, x):
        return softmax(x)
