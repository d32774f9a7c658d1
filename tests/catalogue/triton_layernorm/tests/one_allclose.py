"""A weak attempt: one comparison of forward with F.layer_norm, on one input."""

import torch
import torch.nn.functional as F

CATCHES = "grid_past_the_rows, eps_outside_sqrt, spare_lanes_in_the_variance, unbiased_variance"
FALSE_ALARMS = ""


def test_matches_torch(kata):
    """layer_norm gives F.layer_norm's output."""
    torch.manual_seed(0)
    x, weight, bias = torch.randn(4, 64), torch.ones(64), torch.zeros(64)
    torch.testing.assert_close(kata.layer_norm(x, weight, bias), F.layer_norm(x, (64,)))
