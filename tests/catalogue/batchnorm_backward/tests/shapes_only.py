"""A first attempt that checks only shapes and dtypes: the output like x, and each gradient
like its input, never a value."""

import torch

CATCHES = "returns_three_grads, scales_grad_out_in_place"
FALSE_ALARMS = ""


def test_output_shape_and_dtype(kata):
    """batch_norm_train returns a tensor shaped like x, in x's dtype."""
    x = torch.randn(4, 3, 2, 2)
    y = kata.batch_norm_train(x, torch.ones(3), torch.zeros(3))
    assert y.shape == x.shape
    assert y.dtype == x.dtype


def test_gradient_shapes(kata):
    """backward gives x a gradient like x, and the weight and bias gradients of shape (C,)."""
    x = torch.randn(8, 3, requires_grad=True)
    w = torch.ones(3, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    kata.batch_norm_train(x, w, b).sum().backward()
    assert x.grad.shape == x.shape
    assert w.grad.shape == (3,)
    assert b.grad.shape == (3,)
