"""One comparison with torch: forward and both gradients against autograd through F.rms_norm,
on one 2-D input in float32 with eps=1e-6."""

import torch
import torch.nn.functional as F

CATCHES = (
    "returns_two_grads, scales_grad_out_in_place, saves_output_as_x_hat, "
    "grad_x_without_weight, missing_projection_term, projection_over_every_row"
)
FALSE_ALARMS = ""


def test_matches_torch(kata):
    """rms_norm's output and gradients match F.rms_norm's on a (4, 8) input."""
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    w = torch.randn(8) + 1
    grad_out = torch.randn(4, 8)
    mine = [t.clone().requires_grad_() for t in (x, w)]
    ref = [t.clone().requires_grad_() for t in (x, w)]
    y = kata.rms_norm(*mine, 1e-6)
    y.backward(grad_out)
    want = F.rms_norm(ref[0], (8,), ref[1], 1e-6)
    want.backward(grad_out)
    torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-4)
    for got, expected in zip(mine, ref):
        torch.testing.assert_close(got.grad, expected.grad, rtol=1e-4, atol=1e-4)
