"""A weak attempt: one comparison with the formula x * mask / (1 - p), at the default p = 0.5,
on one input."""

import torch

CATCHES = "drops_by_indexing, modifies_input, no_scaling, scales_by_keep_prob"
FALSE_ALARMS = ""


def test_matches_formula(kata):
    """Dropout() keeps x / (1 - p) where it does not drop."""
    torch.manual_seed(0)
    x = torch.rand(8, 32) + 0.5
    y = kata.Dropout()(x)
    torch.testing.assert_close(y, x * (y != 0) / 0.5)
