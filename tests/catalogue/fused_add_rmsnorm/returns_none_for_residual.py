"""Mistake: updates the residual in place, then returns (y, None), as if the caller would read
the residual from its own tensor: the contract returns that tensor too."""

from solutions.fused_add_rmsnorm import fused_add_rms_norm as reference

EXPECT = "test_outputs_like_input"
SAYS = "whose second element, the residual, is None, not a tensor"


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    y, _ = reference(x, residual, weight, eps)
    return y, None
