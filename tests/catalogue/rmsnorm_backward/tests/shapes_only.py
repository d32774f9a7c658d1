"""A first attempt that checks only shapes and dtypes: the output like x, the gradients like
their inputs, and the module's weight, never a value."""

import torch

CATCHES = "returns_two_grads, scales_grad_out_in_place"
FALSE_ALARMS = ""


def test_output_shape_and_dtype(kata):
    """rms_norm returns a tensor shaped like x, in x's dtype."""
    x = torch.randn(2, 3, 8)
    y = kata.rms_norm(x, torch.ones(8))
    assert y.shape == x.shape
    assert y.dtype == x.dtype


def test_gradient_shapes(kata):
    """backward gives x a gradient like x, and the weight one of shape (D,)."""
    x = torch.randn(4, 8, requires_grad=True)
    w = torch.ones(8, requires_grad=True)
    kata.rms_norm(x, w).sum().backward()
    assert x.grad.shape == x.shape
    assert w.grad.shape == (8,)


def test_module_weight_shape(kata):
    """RMSNorm(8) has a weight of shape (8,)."""
    assert kata.RMSNorm(8).weight.shape == (8,)
