"""One comparison with torch: forward and the three gradients against autograd through
F.layer_norm, on one 2-D input in float32 with the default eps."""

import torch
import torch.nn.functional as F

CATCHES = (
    "returns_three_grads, scales_grad_out_in_place, unbiased_variance, "
    "grad_bias_mean_not_sum, grad_x_without_weight, missing_mean_term, missing_variance_term,"
    " variance_term_over_every_row, mean_term_over_the_batch, grad_bias_none, grad_x_without_rstd"
)
FALSE_ALARMS = ""


def test_matches_torch(kata):
    """layer_norm's output and gradients match F.layer_norm's on a (4, 8) input."""
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    w, b = torch.randn(8) + 1, torch.randn(8)
    grad_out = torch.randn(4, 8)
    mine = [t.clone().requires_grad_() for t in (x, w, b)]
    ref = [t.clone().requires_grad_() for t in (x, w, b)]
    y = kata.layer_norm(*mine)
    y.backward(grad_out)
    want = F.layer_norm(ref[0], (8,), ref[1], ref[2])
    want.backward(grad_out)
    torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-4)
    for got, expected in zip(mine, ref):
        torch.testing.assert_close(got.grad, expected.grad, rtol=1e-4, atol=1e-4)
