"""Mistake: forward sums each row's squares one element at a time in a Python loop: right
values, but its work grows with the row's width."""

import torch

from solutions.rmsnorm_backward import HALF
from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_vectorized"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float() if x.dtype in HALF else x
        eps = torch.finfo(xf.dtype).eps if eps is None else eps
        d = xf.shape[-1]
        total = torch.zeros_like(xf[..., :1])
        for j in range(d):
            total = total + xf[..., j : j + 1].square()
        rstd = torch.rsqrt(total / d + eps)
        x_hat = xf * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        y = x_hat if weight is None else x_hat * weight
        return y.to(x.dtype)


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
