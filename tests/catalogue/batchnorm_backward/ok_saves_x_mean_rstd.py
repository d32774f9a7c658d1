"""Correct, written differently: saves x with the channel means and rstd as (C,) vectors and
recomputes x̂ in backward."""

import torch

EXPECT = "pass"


class BatchNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        dims = [0] + list(range(2, x.dim()))
        var, mean = torch.var_mean(xf, dim=dims, correction=0)
        rstd = (var + eps).rsqrt()
        ctx.save_for_backward(x, mean, rstd, weight)
        view = (1, -1) + (1,) * (x.dim() - 2)
        y = (xf - mean.reshape(view)) * (rstd * weight).reshape(view) + bias.reshape(view)
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x, mean, rstd, weight = ctx.saved_tensors
        view = (1, -1) + (1,) * (x.dim() - 2)
        dims = [0] + list(range(2, x.dim()))
        x_hat = (x.to(mean.dtype) - mean.reshape(view)) * rstd.reshape(view)
        dy = grad_out.to(mean.dtype)
        grad_bias = dy.sum(dims)
        grad_weight = (dy * x_hat).sum(dims)
        m = x.numel() // x.shape[1]
        # dL/dx = w·r/m · (m·dy − Σdy − x̂·Σ(dy·x̂)), with the sums already in grad_bias/weight
        scale = (weight * rstd / m).reshape(view)
        grad_x = scale * (m * dy - grad_bias.reshape(view) - x_hat * grad_weight.reshape(view))
        return grad_x.to(x.dtype), grad_weight.to(weight.dtype), grad_bias.to(weight.dtype), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
