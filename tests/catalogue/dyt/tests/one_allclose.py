"""A weak attempt: one comparison with the formula, the layer as built, on one input."""

import torch

CATCHES = "alpha_default_one, tanh_then_alpha, alpha_float64, hardtanh, scales_input_in_place"
FALSE_ALARMS = ""


def test_matches_formula(kata):
    """DyT(8) as built gives 1 · tanh(0.5 · x) + 0."""
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    torch.testing.assert_close(kata.DyT(8)(x), torch.tanh(0.5 * x))
