"""Mistake: forward saves the variance, and backward recomputes the scale as rsqrt(var),
leaving eps out: off wherever the variance is small. Every gradient term is there."""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_backward_eps_inside_sqrt"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        xc = xf - xf.mean(-1, keepdim=True)
        var = xc.square().mean(-1, keepdim=True)
        x_hat = xc * torch.rsqrt(var + eps)
        ctx.save_for_backward(x_hat, var, weight)
        return (x_hat * weight + bias).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x_hat, var, weight = ctx.saved_tensors
        rstd = torch.rsqrt(var)  # the mistake: rsqrt(var + eps)
        dy = grad_out.to(x_hat.dtype)
        d = dy.shape[-1]
        g = dy * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grads = grad_x, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)
        return *(t.to(grad_out.dtype) for t in grads), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
