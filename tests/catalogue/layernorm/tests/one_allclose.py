"""A weak attempt: one comparison with nn.LayerNorm, default options, on one input."""

import torch
from torch import nn

CATCHES = (
    "int_shape_stored, forgets_keepdim, mean_without_keepdim, normalizes_over_batch, no_eps, "
    "unbiased_variance, eps_default_from_bert, no_square_root"
)
FALSE_ALARMS = ""


def test_matches_torch(kata):
    """LayerNorm(8) gives nn.LayerNorm(8)'s output."""
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    torch.testing.assert_close(kata.LayerNorm(8)(x), nn.LayerNorm(8)(x))
