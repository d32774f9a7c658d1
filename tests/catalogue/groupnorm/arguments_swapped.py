"""Mistake: the constructor takes its first two arguments the other way round,
GroupNorm(num_channels, num_groups): GroupNorm(2, 6) holds 2 channels in 6 groups. The
report says the two are swapped, not that the weight is one value per group."""

import torch
from torch import nn

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_parameters"
ALSO = (
    "test_state_dict_round_trip, "
    "test_output_like_input, "
    "test_input_unmodified, "
    "test_from_scratch, "
    "test_vectorized, "
    "test_statistics_per_sample, "
    "test_biased_variance, "
    "test_one_and_c_groups, "
    "test_groups_are_contiguous_channels, "
    "test_no_affine, "
    "test_same_in_eval_mode, "
    "test_follows_device, "
    "test_forward_matches_torch, "
    "test_gradients_match"
)


class GroupNorm(Reference):
    def __init__(self, num_channels, num_groups, eps=1e-5, affine=True):
        nn.Module.__init__(self)
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        if affine:
            self.weight = nn.Parameter(torch.ones(num_channels))
            self.bias = nn.Parameter(torch.zeros(num_channels))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
