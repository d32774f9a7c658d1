"""Mistake: updates the residual in place and computes y right, but returns the pair the other
way round, (residual, y): a caller taking y first gets the residual stream."""

from solutions.fused_add_rmsnorm import fused_add_rms_norm as reference

EXPECT = "test_outputs_like_input"
ALSO = (
    "test_masked_last_block, "
    "test_residual_is_the_sum, "
    "test_residual_in_place, "
    "test_formula, "
    "test_non_power_of_two_width, "
    "test_wide_rows, "
    "test_leading_dims, "
    "test_row_stride, "
    "test_fp32_accumulation, "
    "test_half_precision, "
    "test_residual_rounded_before_norm"
)
SAYS = "is the caller's residual tensor, where y belongs"


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    y, residual = reference(x, residual, weight, eps)
    return residual, y
