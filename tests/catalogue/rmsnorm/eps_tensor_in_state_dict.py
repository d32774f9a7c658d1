"""Mistake: keeps eps in a buffer, so its state_dict has a key nn.RMSNorm's does not have."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_state_dict_round_trip"


class RMSNorm(Reference):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__(normalized_shape, eps, elementwise_affine)
        self.register_buffer("eps_tensor", torch.tensor(1e-6 if eps is None else eps))
