"""A weak attempt: tests only that the output has the input's shape and dtype, never a value."""

import torch

CATCHES = (
    "returns_float32, rejects_unbatched, unbatched_reduces_everything, unsqueezes_input_in_place"
)
FALSE_ALARMS = ""


def test_output_shape(kata):
    """The output has the input's shape, batched or unbatched."""
    torch.manual_seed(0)
    for cls, shape in (
        ("InstanceNorm1d", (4, 3, 6)),
        ("InstanceNorm1d", (3, 6)),
        ("InstanceNorm2d", (2, 3, 4, 5)),
    ):
        x = torch.randn(shape)
        assert getattr(kata, cls)(3)(x).shape == x.shape


def test_output_dtype(kata):
    """The output has the input's dtype."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 6, dtype=torch.float64)
    assert kata.InstanceNorm1d(3).double()(x).dtype == torch.float64
