"""Mistake: launches the kernel for 2-D inputs only, and falls back to torch.softmax otherwise."""

import torch

from solutions.triton_softmax import SoftmaxFunction as Reference

EXPECT = "test_kernels_do_the_work"
ALSO = "test_gradient_shapes, test_saves_output_for_backward, test_leading_dims"


class SoftmaxFunction(Reference):
    @staticmethod
    def forward(ctx, x):
        ctx.kernel = x.dim() == 2
        if ctx.kernel:
            return Reference.forward(ctx, x)
        y = torch.softmax(x.float(), -1).to(x.dtype)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        if ctx.kernel:
            return Reference.backward(ctx, dy)
        (y,) = ctx.saved_tensors
        return y * (dy - (dy * y).sum(-1, keepdim=True))


def softmax(x):
    return SoftmaxFunction.apply(x)
