"""Mistake: forward takes the variance with .float() "for stability" (meant as the half upcast):
for a float64 input the statistic alone is rounded to float32, though every element of the
output still answers a nudge of x. gradcheck's finite differences of such a forward are noise,
and it says so; the float64 check names the rounding."""

import torch

from solutions.layernorm_backward import HALF
from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_computes_in_float64"
SAYS = "forward's output differs from autograd's through F.layer_norm in float64"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float() if x.dtype in HALF else x
        xc = xf - xf.mean(-1, keepdim=True)
        variance = xc.float().square().mean(-1, keepdim=True)
        rstd = torch.rsqrt(variance + eps).to(xf.dtype)
        x_hat = xc * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return (x_hat * weight + bias).to(x.dtype)


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
