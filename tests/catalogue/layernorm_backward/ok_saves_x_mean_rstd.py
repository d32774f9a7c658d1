"""Correct, written differently: saves x with the per-row mean and rstd, recomputes x̂."""

import torch

EXPECT = "pass"


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        compute = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        mean = compute.mean(dim=-1, keepdim=True)
        var = compute.var(dim=-1, keepdim=True, correction=0)
        rstd = (var + eps).rsqrt()
        ctx.save_for_backward(x, mean, rstd, weight)
        return torch.addcmul(bias, (compute - mean) * rstd, weight).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x, mean, rstd, weight = ctx.saved_tensors
        x_hat = (x.to(mean.dtype) - mean) * rstd
        dy = grad_out.to(mean.dtype)
        flat_dy, flat_xh = dy.reshape(-1, dy.shape[-1]), x_hat.reshape(-1, dy.shape[-1])
        grad_weight = (flat_dy * flat_xh).sum(0)
        grad_bias = flat_dy.sum(0)
        g = dy * weight
        grad_x = (g - g.mean(-1, True) - x_hat * (g * x_hat).mean(-1, True)) * rstd
        return grad_x.to(x.dtype), grad_weight.to(weight.dtype), grad_bias.to(weight.dtype), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
