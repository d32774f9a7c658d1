"""A weak attempt: tests only that the output has the input's shape and dtype, never a value."""

import torch

CATCHES = "channels_first_wrong_axis, ignores_channels_last, alpha_float64"
FALSE_ALARMS = ""


def test_output_shape(kata):
    """The output has the input's shape, in both layouts."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8)
    assert kata.DyT(8)(x).shape == x.shape
    x = torch.randn(2, 4, 5, 5)
    assert kata.DyT(4, channels_last=False)(x).shape == x.shape


def test_output_dtype(kata):
    """The output has the input's dtype."""
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    assert kata.DyT(8)(x).dtype == torch.float32
