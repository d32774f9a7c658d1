"""Mistake: keeps eps in a buffer, so its state_dict has a key nn.GroupNorm's does not have."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_state_dict_round_trip"


class GroupNorm(Reference):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__(num_groups, num_channels, eps, affine)
        self.register_buffer("eps_tensor", torch.tensor(eps))
