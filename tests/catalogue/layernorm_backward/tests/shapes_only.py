"""A first attempt that checks only shapes: the output like x, and each gradient like its
input, never a value."""

import torch

CATCHES = "returns_three_grads, scales_grad_out_in_place, grad_bias_none"
FALSE_ALARMS = ""


def test_output_shape(kata):
    """layer_norm returns a tensor shaped like x."""
    x = torch.randn(2, 3, 8)
    y = kata.layer_norm(x, torch.ones(8), torch.zeros(8))
    assert y.shape == x.shape


def test_gradient_shapes(kata):
    """backward gives x a gradient like x, and the weight and bias gradients of shape (D,)."""
    x = torch.randn(4, 8, requires_grad=True)
    w = torch.ones(8, requires_grad=True)
    b = torch.zeros(8, requires_grad=True)
    kata.layer_norm(x, w, b).sum().backward()
    assert x.grad.shape == x.shape
    assert w.grad.shape == (8,)
    assert b.grad.shape == (8,)
