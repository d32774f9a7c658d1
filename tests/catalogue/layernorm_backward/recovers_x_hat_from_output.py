"""Mistake: forward saves the output and recovers x̂ = (y − bias) / weight in backward, to save
memory: 0/0 wherever a weight element is 0, and the NaN spreads through each row."""

import torch

from solutions.layernorm_backward import HALF
from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_zero_weight_elements"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float() if x.dtype in HALF else x
        xc = xf - xf.mean(-1, keepdim=True)
        rstd = torch.rsqrt(xc.square().mean(-1, keepdim=True) + eps)
        y = xc * rstd * weight + bias
        ctx.save_for_backward(y, rstd, weight, bias)
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        y, rstd, weight, bias = ctx.saved_tensors
        x_hat = (y - bias) / weight  # the mistake: 0/0 where the weight is 0
        dy = grad_out.to(x_hat.dtype)
        d = dy.shape[-1]
        g = dy * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grads = grad_x, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)
        return *(t.to(grad_out.dtype) for t in grads), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
