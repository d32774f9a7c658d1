"""Correct, with the plain tensor functions torch keeps in torch.functional (einsum, tensordot,
broadcast_tensors, norm): backward recomputes rstd from the centered input it saved. None of
them is autograd, whose namespace torch.func merely starts the same way."""

import torch

EXPECT = "pass"

HALF = (torch.float16, torch.bfloat16)


class BatchNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float() if x.dtype in HALF else x
        x3 = xf.reshape(x.shape[0], x.shape[1], -1)  # (N, C, L): one layout for every rank
        xc = x3 - x3.mean((0, 2), keepdim=True)
        rstd = torch.rsqrt(xc.square().mean((0, 2), keepdim=True) + eps)
        ctx.save_for_backward(xc, weight)
        ctx.eps = eps
        y = torch.einsum("ncl,c->ncl", xc * rstd, weight) + bias[:, None]
        return y.reshape(x.shape).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        xc, weight = ctx.saved_tensors
        n = xc.shape[0] * xc.shape[2]
        var = torch.norm(xc, dim=(0, 2), keepdim=True) ** 2 / n
        rstd = torch.rsqrt(var + ctx.eps)
        dy = grad_out.reshape(xc.shape).to(xc.dtype)
        x_hat, dy = torch.broadcast_tensors(xc * rstd, dy)
        grad_weight = torch.einsum("ncl,ncl->c", dy, x_hat)
        grad_bias = torch.tensordot(dy, torch.ones_like(dy[:, 0]), dims=([0, 2], [0, 1]))
        g = torch.einsum("ncl,c->ncl", dy, weight)
        g_mean = g.mean((0, 2), keepdim=True)
        gx_mean = torch.einsum("ncl,ncl->c", g, x_hat)[:, None] / n
        grad_x = rstd * (g - g_mean - x_hat * gx_mean)
        grads = grad_x.reshape(grad_out.shape).to(grad_out.dtype)
        return grads, grad_weight.to(weight.dtype), grad_bias.to(weight.dtype), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
