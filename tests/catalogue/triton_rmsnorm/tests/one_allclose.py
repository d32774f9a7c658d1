"""A weak attempt: one comparison with F.rms_norm, default eps, on one float32 input."""

import torch
import torch.nn.functional as F

CATCHES = "weight_offset_by_row, default_eps_1e5, y_stored_over_x, atomic_sums_in_empty"
FALSE_ALARMS = ""


def test_matches_torch(kata):
    """rms_norm(x, weight) gives F.rms_norm's output."""
    torch.manual_seed(0)
    x, weight = torch.randn(4, 64), torch.randn(64)
    torch.testing.assert_close(kata.rms_norm(x, weight), F.rms_norm(x, (64,), weight, 1e-6))
