"""Mistake: y and dx are allocated in float32, the kernels' compute dtype, whatever x's dtype:
half precision in, float32 out, twice the bytes stored."""

import torch

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block, _softmax_bwd, _softmax_fwd

EXPECT = "test_half_precision"


class SoftmaxFunction(Reference):
    @staticmethod
    def forward(ctx, x):
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        y = torch.empty(x2d.shape, dtype=torch.float32, device=x.device)
        _softmax_fwd[(x2d.shape[0],)](x2d, y, x2d.stride(0), y.stride(0), n, BLOCK=_block(n))
        ctx.save_for_backward(y)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        m, n = y.shape
        dy2d = dy.reshape(m, n)
        dx = torch.empty((m, n), dtype=torch.float32, device=dy.device)
        _softmax_bwd[(m,)](
            y, dy2d, dx, y.stride(0), *dy2d.stride(), dx.stride(0), n, BLOCK=_block(n)
        )
        return dx.view(dy.shape)


def softmax(x):
    return SoftmaxFunction.apply(x)
