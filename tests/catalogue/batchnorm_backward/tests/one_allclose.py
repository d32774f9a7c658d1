"""One comparison with torch: forward and the three gradients against autograd through
F.batch_norm in training mode, on one (N, C) input in float32 with the default eps."""

import torch
import torch.nn.functional as F

CATCHES = (
    "returns_three_grads, scales_grad_out_in_place, unbiased_variance, grad_weight_uses_x, "
    "grad_x_without_weight, missing_mean_term, missing_variance_term"
)
FALSE_ALARMS = ""


def test_matches_torch(kata):
    """batch_norm_train's output and gradients match F.batch_norm's on an (8, 3) input."""
    torch.manual_seed(0)
    x = torch.randn(8, 3)
    w, b = torch.randn(3) + 1, torch.randn(3)
    grad_out = torch.randn(8, 3)
    mine = [t.clone().requires_grad_() for t in (x, w, b)]
    ref = [t.clone().requires_grad_() for t in (x, w, b)]
    y = kata.batch_norm_train(*mine)
    y.backward(grad_out)
    want = F.batch_norm(ref[0], None, None, ref[1], ref[2], training=True)
    want.backward(grad_out)
    torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-4)
    for got, expected in zip(mine, ref):
        torch.testing.assert_close(got.grad, expected.grad, rtol=1e-4, atol=1e-4)
