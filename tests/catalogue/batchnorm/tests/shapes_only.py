"""A weak attempt: tests only that the output has the input's shape and dtype, never a value."""

import torch

CATCHES = "returns_float32"
FALSE_ALARMS = ""


def test_output_shape(kata):
    """The output has the input's shape, for BatchNorm1d and BatchNorm2d."""
    torch.manual_seed(0)
    for cls, shape in (
        ("BatchNorm1d", (4, 3)),
        ("BatchNorm1d", (4, 3, 5)),
        ("BatchNorm2d", (2, 3, 4, 4)),
    ):
        x = torch.randn(shape)
        assert getattr(kata, cls)(3)(x).shape == x.shape


def test_output_dtype(kata):
    """The output has the input's dtype."""
    torch.manual_seed(0)
    x = torch.randn(4, 3, dtype=torch.float64)
    assert kata.BatchNorm1d(3).double()(x).dtype == torch.float64
