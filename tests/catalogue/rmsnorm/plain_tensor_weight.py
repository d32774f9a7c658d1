"""Mistake: weight kept as a plain tensor, so .to() and the optimizer never see it."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_parameters"
ALSO = "test_state_dict_round_trip, test_to_dtype, test_follows_device, test_gradients_match"


class RMSNorm(Reference):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__(normalized_shape, eps, False)
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            del self.weight
            self.weight = torch.ones(self.normalized_shape)
