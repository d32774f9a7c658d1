"""Mistake: updates the residual in place and computes y right, but returns the pair the other
way round, (residual, y): a caller taking y first gets the residual stream."""

from solutions.fused_add_rmsnorm import fused_add_rms_norm as reference

EXPECT = "test_outputs_like_input"
SAYS = "is the caller's residual tensor, where y belongs"


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    y, residual = reference(x, residual, weight, eps)
    return residual, y
