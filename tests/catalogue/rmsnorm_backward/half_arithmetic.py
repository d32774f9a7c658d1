"""Mistake: computes the mean square and the gradient in the input's dtype: in float16 the
squares of values above 256 overflow, and every mean rounds to half precision."""

import torch

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_half_precision"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        compute = torch.float64 if x.dtype == torch.float64 else torch.float32
        eps = torch.finfo(compute).eps if eps is None else eps
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        x_hat = x * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return x_hat if weight is None else x_hat * weight


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
