"""A weak attempt: tests only that y and dx have x's shape and dtype, never a value."""

import torch

CATCHES = "returns_2d, output_fp32, persistent_rows_unchecked"
FALSE_ALARMS = ""


def test_output_shape(kata):
    """y has x's shape, for rows and for leading dims."""
    torch.manual_seed(0)
    for shape in ((4, 64), (2, 3, 64)):
        x = torch.randn(shape)
        assert kata.softmax(x).shape == x.shape


def test_dtypes(kata):
    """y and dx have x's dtype, float16 included."""
    torch.manual_seed(0)
    x = torch.randn(2, 64).half().requires_grad_()
    y = kata.softmax(x)
    y.backward(torch.randn(2, 64).half())
    assert y.dtype == torch.float16
    assert x.grad.dtype == torch.float16
