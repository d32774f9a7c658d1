"""Mistake: no upcast for half inputs: the channel means and variances are computed and
rounded in float16/bfloat16 (and backward follows the saved x̂'s dtype). On ordinary data that
costs an ulp or two; on x = 384 + randn (float16) a mean rounded to float16 is off by up to 1/8
of the spread, and every x̂ with it."""

import torch

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_half_precision"
SAYS = "with x = 384 + randn"


class BatchNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        dims, shape = _layout(x)
        mean = x.mean(dims, keepdim=True)
        xc = x - mean
        rstd = torch.rsqrt(xc.square().mean(dims, keepdim=True) + eps)
        x_hat = xc * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return x_hat * weight.view(shape) + bias.view(shape)


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
