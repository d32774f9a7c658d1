"""A weak attempt: tests only that y has x's shape and dtype, never a value."""

import torch

CATCHES = "returns_2d, returns_y_only, rows_unmasked, weight_offset_by_row, output_fp32"
FALSE_ALARMS = ""


def test_output_shape(kata):
    """y has x's shape, with and without leading dims."""
    torch.manual_seed(0)
    weight = torch.ones(64)
    for shape in ((4, 64), (2, 3, 64)):
        x, residual = torch.randn(shape), torch.randn(shape)
        y, _ = kata.fused_add_rms_norm(x, residual, weight)
        assert y.shape == x.shape


def test_output_dtype(kata):
    """float16 inputs give a float16 y."""
    torch.manual_seed(0)
    x, residual = torch.randn(4, 64).half(), torch.randn(4, 64).half()
    y, _ = kata.fused_add_rms_norm(x, residual, torch.ones(64).half())
    assert y.dtype == torch.float16
