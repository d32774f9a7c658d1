"""Mistake: saves both x and x̂ for backward, two tensors the size of x where one will do."""

import torch

from solutions.rmsnorm_backward import HALF
from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_saves_only_what_backward_needs"
ALSO = "test_module, test_gradcheck"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float() if x.dtype in HALF else x
        eps = torch.finfo(xf.dtype).eps if eps is None else eps
        rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
        x_hat = xf * rstd
        ctx.save_for_backward(x, x_hat, rstd, weight)
        y = x_hat if weight is None else x_hat * weight
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        _, x_hat, rstd, weight = ctx.saved_tensors
        ctx.save_for_backward(x_hat, rstd, weight)
        return Reference.backward(ctx, grad_out)


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
