"""Mistake: forward takes the mean of squares with .float() "for stability" (meant as the half
upcast): for a float64 input the statistic alone is rounded to float32, and backward, exact,
is the derivative of a forward that moves in float32's steps. gradcheck cannot judge it (its
finite differences are noise, and it says so); the float64 check names the rounding."""

import torch

from solutions.rmsnorm_backward import HALF
from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_computes_in_float64"
SAYS = "forward's output differs from autograd's through F.rms_norm in float64"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float() if x.dtype in HALF else x
        eps = torch.finfo(xf.dtype).eps if eps is None else eps
        mean_square = xf.float().square().mean(-1, keepdim=True)
        rstd = torch.rsqrt(mean_square + eps).to(xf.dtype)
        x_hat = xf * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        y = x_hat if weight is None else x_hat * weight
        return y.to(x.dtype)


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
