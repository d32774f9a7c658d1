"""A weak attempt: one comparison of y with F.rms_norm of x + residual, default eps, on one
float32 input; the residual itself is never looked at."""

import torch
import torch.nn.functional as F

CATCHES = (
    "returns_residual_first, returns_y_only, y_on_meta, weight_offset_by_row, "
    "atomic_sums_not_zeroed, norm_of_x, centered_like_layernorm"
)
FALSE_ALARMS = ""


def test_matches_torch(kata):
    """y is F.rms_norm(x + residual)."""
    torch.manual_seed(0)
    x, residual, weight = torch.randn(4, 64), torch.randn(4, 64), torch.randn(64)
    want = F.rms_norm(x + residual, (64,), weight, 1e-6)
    y, _ = kata.fused_add_rms_norm(x, residual.clone(), weight)
    torch.testing.assert_close(y, want)
