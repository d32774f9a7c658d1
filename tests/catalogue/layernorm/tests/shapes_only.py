"""A weak attempt: tests only that the output has the input's shape and dtype, never a value."""

import torch

CATCHES = "forgets_keepdim, mean_without_keepdim, returns_float32"
FALSE_ALARMS = ""


def test_output_shape(kata):
    """The output has the input's shape."""
    torch.manual_seed(0)
    layer = kata.LayerNorm(8)
    for shape in ((4, 8), (2, 3, 8)):
        x = torch.randn(shape)
        assert layer(x).shape == x.shape


def test_output_dtype(kata):
    """The output has the input's dtype."""
    torch.manual_seed(0)
    x = torch.randn(4, 8, dtype=torch.float64)
    assert kata.LayerNorm(8).double()(x).dtype == torch.float64
