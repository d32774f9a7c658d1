"""Mistake: builds the row count as torch.tensor(D) on the CPU, then a (1, D) ones row for the
sums: backward mixes devices on a GPU."""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_follows_device"
ALSO = "test_unbatched_input"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        rows = tuple(range(grad_out.dim() - 1))
        ones = torch.ones(1, grad_out.shape[-1], dtype=grad_out.dtype)
        g = grad_out * weight
        mean_g = (g * ones).sum(-1, keepdim=True) / grad_out.shape[-1]
        grad_x = rstd * (g - mean_g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, (grad_out * x_hat).sum(rows), grad_out.sum(rows), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
