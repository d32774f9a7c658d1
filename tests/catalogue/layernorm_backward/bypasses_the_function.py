"""Mistake: layer_norm computes with plain tensor operations and never calls the Function, so
autograd, not the hand-written backward, computes the gradient."""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_is_an_autograd_function"
ALSO = "test_saves_only_what_backward_needs"


class LayerNormFunction(Reference):
    """The reference, unused by layer_norm below."""


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    var = (x - mean).square().mean(-1, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps) * weight + bias
