"""Mistake: the batch variance in one pass, E[x²] − E[x]², which cancels catastrophically in
float32 when a channel's mean is large next to its spread."""

import torch

EXPECT = "test_numerically_stable"

HALF = (torch.float16, torch.bfloat16)


class BatchNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        dims = [0] + list(range(2, x.dim()))
        shape = [1, -1] + [1] * (x.dim() - 2)
        xf = x.float() if x.dtype in HALF else x
        mean = xf.mean(dims, keepdim=True)
        var = (xf * xf).mean(dims, keepdim=True) - mean * mean  # one pass: E[x²] − E[x]²
        xc = xf - mean
        rstd = torch.rsqrt(var + eps)
        x_hat = xc * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return (x_hat * weight.view(shape) + bias.view(shape)).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dims = [0] + list(range(2, x_hat.dim()))
        shape = [1, -1] + [1] * (x_hat.dim() - 2)
        dy = grad_out.to(x_hat.dtype)
        grad_weight = (dy * x_hat).sum(dims)
        grad_bias = dy.sum(dims)
        g = dy * weight.view(shape)
        grad_x = rstd * (
            g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)
        )
        return (
            grad_x.to(grad_out.dtype),
            grad_weight.to(weight.dtype),
            grad_bias.to(weight.dtype),
            None,
        )


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
