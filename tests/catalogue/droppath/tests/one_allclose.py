"""A weak attempt: one comparison with the formula x * keep / (1 - p), keep read from the
output, on one input."""

import torch

CATCHES = (
    "drops_in_place, per_element_mask, scales_by_drop_prob, never_scales, module_ignores_training"
)
FALSE_ALARMS = ""


def test_matches_formula(kata):
    """DropPath(0.25) keeps whole samples scaled by 1 / (1 - p)."""
    torch.manual_seed(0)
    x = torch.rand(16, 4) + 0.5
    y = kata.DropPath(0.25)(x)
    keep = (y != 0).any(1, keepdim=True)
    torch.testing.assert_close(y, x * keep / 0.75)
