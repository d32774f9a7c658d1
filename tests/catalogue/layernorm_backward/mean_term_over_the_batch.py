"""Mistake: backward's mean term takes mean(g) over dim 0 (the batch), not over each row's last
dim."""

import torch

EXPECT = "test_grad_x_through_the_mean"
ALSO = (
    "test_grad_x_through_the_variance, "
    "test_backward_eps_inside_sqrt, "
    "test_zero_weight_elements, "
    "test_gradcheck, "
    "test_gradients_match_autograd"
)

HALF = (torch.float16, torch.bfloat16)


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float() if x.dtype in HALF else x
        mean = xf.mean(-1, keepdim=True)
        xc = xf - mean
        rstd = torch.rsqrt(xc.pow(2).mean(-1, keepdim=True) + eps)
        x_hat = xc * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return (x_hat * weight + bias).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        D = dy.shape[-1]
        grad_weight = (dy * x_hat).reshape(-1, D).sum(0)
        grad_bias = dy.reshape(-1, D).sum(0)
        g = dy * weight
        grad_x = rstd * (g - g.mean(0, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return (
            grad_x.to(grad_out.dtype),
            grad_weight.to(weight.dtype),
            grad_bias.to(weight.dtype),
            None,
        )


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
