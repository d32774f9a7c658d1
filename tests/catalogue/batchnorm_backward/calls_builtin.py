"""Mistake: forward hands the normalization to the built-in F.batch_norm; backward is by hand."""

import torch
import torch.nn.functional as F

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_from_scratch"


class BatchNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        dims, _ = _layout(x)
        mean = x.mean(dims, keepdim=True)
        rstd = torch.rsqrt((x - mean).square().mean(dims, keepdim=True) + eps)
        ctx.save_for_backward((x - mean) * rstd, rstd, weight)
        return F.batch_norm(x, None, None, weight, bias, training=True, eps=eps)


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
