"""Mistake: backward recomputes x̂ with the built-in F.layer_norm instead of saving it."""

import torch
import torch.nn.functional as F

from solutions.layernorm_backward import HALF
from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_from_scratch"
ALSO = "test_unbatched_input"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float() if x.dtype in HALF else x
        mean = xf.mean(-1, keepdim=True)
        rstd = torch.rsqrt((xf - mean).square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(xf, rstd, weight)
        ctx.eps = eps
        return ((xf - mean) * rstd * weight + bias).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        xf, rstd, weight = ctx.saved_tensors
        x_hat = F.layer_norm(xf, xf.shape[-1:], eps=ctx.eps)
        dy = grad_out.to(xf.dtype)
        rows = tuple(range(dy.dim() - 1))
        g = dy * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grad_weight, grad_bias = (dy * x_hat).sum(rows), dy.sum(rows)
        return (
            grad_x.to(grad_out.dtype),
            grad_weight.to(weight.dtype),
            grad_bias.to(weight.dtype),
            None,
        )


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
