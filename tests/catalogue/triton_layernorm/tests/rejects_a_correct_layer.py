"""An over-strict attempt: demands y bit for bit equal to torch's own float32 F.layer_norm,
where a kernel's sums in another order round differently; its other tests are sound."""

import torch
import torch.nn.functional as F

CATCHES = "returns_2d, grid_past_the_rows, missing_mask, dweight_summed_along_row"
FALSE_ALARMS = "test_bit_exact_like_torch"


def test_bit_exact_like_torch(kata):
    """y equals F.layer_norm's, bit for bit."""
    torch.manual_seed(0)
    x, weight, bias = torch.randn(4, 33) * 2 + 1, torch.randn(33), torch.randn(33)
    want = F.layer_norm(x, (33,), weight, bias, 1e-5)
    torch.testing.assert_close(kata.layer_norm(x, weight, bias), want, rtol=0, atol=0)


def test_grad_bias_sums_every_row(kata):
    """dbias is dy summed over every row of a 3-D x."""
    torch.manual_seed(1)
    x = torch.randn(2, 4, 33)
    weight = torch.randn(33).requires_grad_()
    bias = torch.randn(33).requires_grad_()
    dy = torch.randn(2, 4, 33)
    kata.layer_norm(x, weight, bias).backward(dy)
    torch.testing.assert_close(bias.grad, dy.sum((0, 1)), rtol=1e-4, atol=1e-4)
