"""Mistake: the unbiased variance (divide by D - 1) in the rstd, torch.var's default."""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_forward_matches_torch"
ALSO = (
    "test_grad_weight, "
    "test_grad_x_through_the_weight, "
    "test_grad_x_through_the_variance, "
    "test_backward_eps_inside_sqrt, "
    "test_zero_weight_elements, "
    "test_gradcheck, "
    "test_gradients_match_autograd, "
    "test_unbatched_input"
)


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(-1, keepdim=True)
        rstd = torch.rsqrt(x.var(-1, keepdim=True) + eps)
        x_hat = (x - mean) * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return x_hat * weight + bias


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
