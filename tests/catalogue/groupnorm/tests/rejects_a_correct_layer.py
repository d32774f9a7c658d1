"""A learner's tests of GroupNorm with one over-strict test: it asks for torch's newest wording
of the divisibility error, with the two numbers, where the contract asks only for a ValueError
(torch 2.4's shorter message is correct too). The other two tests are sound."""

import pytest
import torch
from torch import nn

CATCHES = (
    "affine_per_group, gamma_beta_names, eps_tensor_in_state_dict, forgets_to_reshape_back, "
    "stats_over_batch, unbiased_variance, channels_only_per_position, group_size_for_count, "
    "variance_per_channel, groups_wrong_axis, eps_outside_sqrt, arguments_swapped"
)
FALSE_ALARMS = "test_indivisible_message"


def test_state_dict_keys(kata):
    """The state_dict has nn.GroupNorm's keys and shapes."""
    mine, ref = kata.GroupNorm(2, 6).state_dict(), nn.GroupNorm(2, 6).state_dict()
    assert {k: v.shape for k, v in mine.items()} == {k: v.shape for k, v in ref.items()}


def test_matches_torch_float64(kata):
    """The output matches nn.GroupNorm in float64, with random weight and bias."""
    torch.manual_seed(0)
    ref = nn.GroupNorm(3, 6).double()
    with torch.no_grad():
        ref.weight.normal_()
        ref.bias.normal_()
    mine = kata.GroupNorm(3, 6).double()
    mine.load_state_dict(ref.state_dict())
    x = torch.randn(2, 6, 4, dtype=torch.float64) * 2 + 1
    torch.testing.assert_close(mine(x), ref(x), rtol=1e-7, atol=1e-7)


def test_indivisible_message(kata):
    """GroupNorm(4, 6) raises ValueError with torch's message naming both numbers."""
    with pytest.raises(
        ValueError, match=r"num_channels \(6\) must be divisible by num_groups \(4\)"
    ):
        kata.GroupNorm(4, 6)
