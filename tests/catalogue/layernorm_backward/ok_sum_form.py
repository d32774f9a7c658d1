"""Correct, written differently: the textbook sum form, (r / D)(D·g − Σg − x̂·Σ(g·x̂))."""

import torch

EXPECT = "pass"


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        centred = xf - xf.mean(-1, keepdim=True)
        inv_std = 1.0 / torch.sqrt((centred * centred).mean(-1, keepdim=True) + eps)
        normed = centred * inv_std
        ctx.save_for_backward(normed, inv_std, weight)
        return (normed * weight + bias).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        normed, inv_std, weight = ctx.saved_tensors
        d = normed.shape[-1]
        dy = grad_out.to(normed.dtype)
        g = dy * weight
        sum_g = g.sum(-1, keepdim=True)
        sum_gx = (g * normed).sum(-1, keepdim=True)
        grad_x = (inv_std / d) * (d * g - sum_g - normed * sum_gx)
        lead = list(range(dy.dim() - 1))
        grad_w = torch.sum(dy * normed, dim=lead) if lead else dy * normed
        grad_b = torch.sum(dy, dim=lead) if lead else dy
        return grad_x.to(grad_out.dtype), grad_w.to(weight.dtype), grad_b.to(weight.dtype), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
