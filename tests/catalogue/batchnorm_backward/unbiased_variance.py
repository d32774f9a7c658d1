"""Mistake: normalizes with the unbiased batch variance (divide by m - 1)."""

import torch

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_forward_matches_torch"
ALSO = (
    "test_grad_weight, "
    "test_grad_x_through_the_weight, "
    "test_grad_x_through_the_variance, "
    "test_backward_eps_inside_sqrt, "
    "test_grad_x_over_n_h_w, "
    "test_zero_weight_elements, "
    "test_gradcheck, "
    "test_gradients_match_autograd"
)


class BatchNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        dims, shape = _layout(x)
        mean = x.mean(dims, keepdim=True)
        rstd = torch.rsqrt(x.var(dims, keepdim=True) + eps)
        x_hat = (x - mean) * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return x_hat * weight.view(shape) + bias.view(shape)


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
