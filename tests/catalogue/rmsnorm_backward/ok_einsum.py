"""Correct: the row reductions and the weight's gradient written with einsum, over rows flattened
with reshape."""

import torch

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "pass"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        d = grad_out.shape[-1]
        dy = grad_out.to(x_hat.dtype).reshape(-1, d)
        xh = x_hat.reshape(-1, d)
        g = dy if weight is None else dy * weight
        proj = torch.einsum("nd,nd->n", g, xh)[:, None] / d
        grad_x = rstd.reshape(-1, 1) * (g - xh * proj)
        grad_w = None if weight is None else torch.einsum("nd,nd->d", dy, xh).to(weight.dtype)
        return grad_x.reshape(grad_out.shape).to(grad_out.dtype), grad_w, None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
