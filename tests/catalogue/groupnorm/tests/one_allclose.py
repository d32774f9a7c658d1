"""A learner's single test of GroupNorm: one comparison with nn.GroupNorm on one float32 input,
with the layers' first weight and bias. It sees the formula and the grouping, not the
parameters, the state_dict, eps, gradients or eval mode."""

import torch
from torch import nn

CATCHES = (
    "forgets_to_reshape_back, stats_over_batch, unbiased_variance, "
    "channels_only_per_position, group_size_for_count, variance_per_channel, "
    "groups_wrong_axis, arguments_swapped"
)
FALSE_ALARMS = ""


def test_matches_torch(kata):
    """GroupNorm(2, 6) gives nn.GroupNorm(2, 6)'s output on one input."""
    torch.manual_seed(0)
    x = torch.randn(3, 6, 5)
    torch.testing.assert_close(kata.GroupNorm(2, 6)(x), nn.GroupNorm(2, 6)(x))
