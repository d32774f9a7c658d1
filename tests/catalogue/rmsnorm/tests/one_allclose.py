"""A weak attempt: one comparison with nn.RMSNorm, default options, on one input."""

import torch
from torch import nn

CATCHES = (
    "random_weight_init, mean_over_every_dim, l2_norm_not_rms, sample_variance_divisor, "
    "divides_by_std, layernorm_centring, gemma_one_plus_weight, weight_starts_at_zero"
)
FALSE_ALARMS = ""


def test_matches_torch(kata):
    """RMSNorm(8) gives nn.RMSNorm(8)'s output."""
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    torch.testing.assert_close(kata.RMSNorm(8)(x), nn.RMSNorm(8)(x))
