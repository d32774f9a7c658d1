"""Mistake: weight and bias kept as plain tensors, so .to() and the optimizer never see them."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_parameters"
ALSO = "test_state_dict_round_trip, test_to_dtype, test_follows_device, test_gradients_match"


class LayerNorm(Reference):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__(normalized_shape, eps, False, bias)
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            del self.weight, self.bias
            self.weight = torch.ones(self.normalized_shape)
            self.bias = torch.zeros(self.normalized_shape) if bias else None
