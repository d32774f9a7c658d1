"""An over-strict attempt: demands that the autograd node be named RMSNormFunctionBackward,
where RMSNormFunction may be another name for a Function called otherwise (Liger-Kernel's
LigerRMSNormFunction); its other tests are sound."""

import torch
from torch import nn

CATCHES = (
    "returns_two_grads, eps_outside_sqrt, missing_projection_term, "
    "projection_over_every_row, eps_outside_sqrt_in_backward, requires_weight"
)
FALSE_ALARMS = "test_node_named_after_the_function"


def test_node_named_after_the_function(kata):
    """The module's output comes from RMSNormFunction: its grad_fn is RMSNormFunctionBackward."""
    x = torch.randn(2, 8, requires_grad=True)
    y = kata.RMSNorm(8)(x)
    assert type(y.grad_fn).__name__ == "RMSNormFunctionBackward"


def test_module_matches_torch(kata):
    """RMSNorm's output and gradients match nn.RMSNorm's, with eps given."""
    torch.manual_seed(1)
    mine, ref = kata.RMSNorm(8, eps=1e-5), nn.RMSNorm(8, eps=1e-5)
    x = torch.randn(3, 4, 8)
    xm, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
    grad_out = torch.randn_like(x)
    y, want = mine(xm), ref(xr)
    y.backward(grad_out)
    want.backward(grad_out)
    torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(xm.grad, xr.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(mine.weight.grad, ref.weight.grad, rtol=1e-5, atol=1e-5)


def test_without_weight(kata):
    """With weight=None each row of the output has mean square ≈ 1."""
    torch.manual_seed(2)
    y = kata.rms_norm(torch.randn(4, 8) * 3, None, 1e-6)
    torch.testing.assert_close(y.square().mean(-1), torch.ones(4), rtol=1e-4, atol=1e-4)
