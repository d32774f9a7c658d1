"""Correct, with the plain tensor functions torch keeps in torch.functional (einsum, tensordot,
broadcast_tensors, norm): backward recomputes rstd from the centered input it saved. None of
them is autograd, whose namespace torch.func merely starts the same way."""

import torch

EXPECT = "pass"

HALF = (torch.float16, torch.bfloat16)


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float() if x.dtype in HALF else x
        xc = xf - xf.mean(-1, keepdim=True)
        rstd = torch.rsqrt(xc.square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(xc, weight)
        ctx.eps = eps
        return (torch.einsum("...d,d->...d", xc * rstd, weight) + bias).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        xc, weight = ctx.saved_tensors
        d = xc.shape[-1]
        rstd = torch.rsqrt(torch.norm(xc, dim=-1, keepdim=True) ** 2 / d + ctx.eps)
        x_hat, dy = torch.broadcast_tensors(xc * rstd, grad_out.to(xc.dtype))
        rows = list(range(dy.dim() - 1))
        grad_weight = torch.tensordot(dy, x_hat, dims=(rows, rows)).diagonal()
        grad_bias = torch.einsum("...d->d", dy)
        g = dy * weight
        gx_mean = torch.einsum("...d,...d->...", g, x_hat)[..., None] / d
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * gx_mean)
        grads = grad_x.to(grad_out.dtype), grad_weight.to(weight.dtype), grad_bias.to(weight.dtype)
        return *grads, None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
