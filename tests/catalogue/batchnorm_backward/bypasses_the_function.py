"""Mistake: batch_norm_train computes with plain tensor operations and never calls the Function,
so autograd, not the hand-written backward, computes the gradient."""

import torch

from solutions.batchnorm_backward import BatchNormFunction as Reference

EXPECT = "test_is_an_autograd_function"
ALSO = "test_saves_only_what_backward_needs"


class BatchNormFunction(Reference):
    """The reference, unused by batch_norm_train below."""


def batch_norm_train(x, weight, bias, eps=1e-5):
    dims = [0, *range(2, x.dim())]
    shape = [1, -1] + [1] * (x.dim() - 2)
    mean = x.mean(dims, keepdim=True)
    var = (x - mean).square().mean(dims, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps) * weight.view(shape) + bias.view(shape)
