"""An over-strict attempt: demands that forward save exactly x̂, rstd and the weight, where a
correct forward may save x with its mean and rstd instead (or the centred x alone); its other
tests are sound."""

import torch
import torch.nn.functional as F

CATCHES = (
    "returns_three_grads, scales_grad_out_in_place, unbiased_variance, grad_bias_mean_not_sum, "
    "grad_bias_none"
)
FALSE_ALARMS = "test_saves_x_hat_rstd_and_weight"


def test_saves_x_hat_rstd_and_weight(kata):
    """forward saves three tensors for backward: x̂ like x, rstd per row, and the weight."""
    torch.manual_seed(0)
    x = torch.randn(4, 8, requires_grad=True)
    w = torch.randn(8, requires_grad=True)
    y = kata.layer_norm(x, w, torch.zeros(8))
    saved = y.grad_fn.saved_tensors
    assert [tuple(t.shape) for t in saved] == [(4, 8), (4, 1), (8,)]


def test_forward_matches_torch(kata):
    """forward matches F.layer_norm on a 3-D input."""
    torch.manual_seed(1)
    x, w, b = torch.randn(2, 3, 16), torch.randn(16) + 1, torch.randn(16)
    want = F.layer_norm(x, (16,), w, b)
    torch.testing.assert_close(kata.layer_norm(x, w, b), want, rtol=1e-5, atol=1e-5)


def test_grad_bias_sums_over_every_row(kata):
    """grad_bias is grad_out summed over the batch and sequence dims."""
    torch.manual_seed(2)
    x, w = torch.randn(3, 4, 8), torch.randn(8) + 1
    b = torch.zeros(8, requires_grad=True)
    grad_out = torch.randn(3, 4, 8)
    kata.layer_norm(x, w, b).backward(grad_out)
    torch.testing.assert_close(b.grad, grad_out.sum((0, 1)), rtol=1e-5, atol=1e-5)
