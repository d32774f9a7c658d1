"""Mistake: takes a working copy of x to normalize in place, x.clone() for float64 and x.float()
for the others, as an upcast that copies; but .float() returns x itself when x is float32
already, so forward overwrites a float32 x (the float64 and half ones are copies)."""

import torch

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_input_unmodified"
SAYS = "float32 (eps=1e-05): forward changed its input x in place"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.clone() if x.dtype == torch.float64 else x.float()  # x itself when float32
        eps = torch.finfo(xf.dtype).eps if eps is None else eps
        rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
        x_hat = xf.mul_(rstd)
        ctx.save_for_backward(x_hat, rstd, weight)
        y = x_hat if weight is None else x_hat * weight
        return y.to(x.dtype)


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
