"""A weak attempt: tests only the shapes and dtypes of y and the gradients, never a value. The
engine's watch over every launch still fails the layers whose kernels read or write outside
their tensors."""

import torch

CATCHES = "returns_2d, grid_past_the_rows, missing_mask, output_fp32"
FALSE_ALARMS = ""


def test_output_shapes(kata):
    """y and x.grad have x's shape, weight.grad and bias.grad the weight's."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 20, requires_grad=True)
    weight = torch.ones(20, requires_grad=True)
    bias = torch.zeros(20, requires_grad=True)
    y = kata.layer_norm(x, weight, bias)
    assert y.shape == x.shape
    y.backward(torch.randn_like(y))
    assert x.grad.shape == x.shape
    assert weight.grad.shape == bias.grad.shape == (20,)


def test_output_dtype(kata):
    """A float16 input gives a float16 output."""
    torch.manual_seed(0)
    x = torch.randn(4, 20, dtype=torch.float16)
    weight, bias = torch.ones(20, dtype=torch.float16), torch.zeros(20, dtype=torch.float16)
    assert kata.layer_norm(x, weight, bias).dtype == torch.float16
