"""A weak attempt: tests only that the output has x's shape and dtype, never a value."""

import torch

CATCHES = "returns_2d, weight_offset_by_row, output_fp32"
FALSE_ALARMS = ""


def test_output_shape(kata):
    """The output has x's shape, with and without leading dims."""
    torch.manual_seed(0)
    weight = torch.ones(64)
    for shape in ((4, 64), (2, 3, 64)):
        x = torch.randn(shape)
        assert kata.rms_norm(x, weight).shape == x.shape


def test_output_dtype(kata):
    """A float16 x gives a float16 output."""
    torch.manual_seed(0)
    x = torch.randn(4, 64).half()
    assert kata.rms_norm(x, torch.ones(64).half()).dtype == torch.float16
