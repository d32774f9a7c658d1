"""Mistake: updates the residual in place, then returns (y, None), as if the caller would read
the residual from its own tensor: the contract returns that tensor too."""

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
SAYS = "whose second element, the residual, is None, not a tensor"


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    y, _ = reference(x, residual, weight, eps)
    return y, None
