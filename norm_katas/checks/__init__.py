"""Helpers for writing checks: all that a kata's suite imports.

A check is a pytest test in tests/test_<kata>.py. Its docstring's first line is what the
learner reads in the checklist; the following paragraphs are hints, idea first, then formula.
It gets the learner's module from the `kata` fixture and the device from `device`; torch is
seeded before every check. Fail with a message that names the input and the first
discrepancy: the helpers here do that for you.

    def test_eps_inside_sqrt(kata, device):
        '''eps is added to the variance, inside the square root

        The denominator is sqrt(var + eps), not sqrt(var) + eps.
        '''
        ln = kata.LayerNorm(8, eps=0.5).to(device)
        x = torch.randn(4, 8, device=device) * 0.1
        expected = F.layer_norm(x, (8,), eps=0.5)
        expect_close(ln(x), expected, given=f"LayerNorm(8, eps=0.5) on x {shape_of(x)}")

Import everything from here; the modules only sort it by theme:
- comparisons: tolerances per dtype and device, expect_close and its kin, inputs that make a
  mistake visible (HALF_OFFSET, nonzero_values);
- modules: the learner's module beside torch's (paired, its parameters and arguments,
  expect_same_grads, state_dict), and its input left as it was;
- running_stats: the running statistics of a BatchNorm-like layer, read by name, and the checks
  such a layer passes in training and eval mode alike;
- runtime: what the code does while it runs (from scratch, vectorized, torch's RNG, float64
  arithmetic, device);
- autograd: the custom torch.autograd.Function of the backward katas, and gradcheck;
- backward: FunctionKata, the backward katas' checks as one template;
- norm_katas.runtime.outcomes: fail, fail_for and the grader's own outcomes (CannotGrade, Hung).
"""

from __future__ import annotations

from norm_katas.checks.autograd import (
    RecordingContext,
    call_backward,
    call_forward,
    expect_backward_by_hand,
    expect_backward_shapes,
    expect_gradcheck,
    expect_node_of,
    expect_saves_only_what_backward_needs,
    expect_through_function,
)
from norm_katas.checks.backward import FunctionKata
from norm_katas.checks.comparisons import (
    DEVICE_TOLERANCE,
    HALF_OFFSET,
    TOLERANCE,
    built_with_attributes,
    describe_call,
    dtype_name,
    expect_attributes,
    expect_close,
    expect_eps_in_the_root,
    expect_grads_close,
    expect_like,
    expect_raises,
    expect_rejects_shapes,
    expect_rounded_once,
    expect_scale_free,
    expect_stable_under_shift,
    expect_tensor,
    expect_unscaled,
    influence,
    nonzero_values,
    shape_of,
    tensors_in,
    tolerance,
    values_close,
)
from norm_katas.checks.doubles import (
    CountingLinear,
    FixedMask,
    RecordingLinear,
    ZeroSublayer,
    perturbed,
    skip_unless_close,
)
from norm_katas.checks.execution import (
    BUILTIN_DROPOUT_MODULES,
    BUILTIN_DROPOUTS,
    BUILTIN_NORM_MODULES,
    BUILTIN_NORMS,
    BUILTIN_SYNC_NORMS,
    FROM_SCRATCH,
    computes_in_float64,
    count_ops,
    count_python_lines,
    expect_built_on_device,
    expect_float64_arithmetic,
    expect_follows_device,
    expect_follows_torch_seed,
    expect_from_scratch,
    expect_function_follows_device,
    expect_vectorized,
    expect_vectorized_rows,
)
from norm_katas.checks.masks import (
    expect_keep_fraction,
    expect_scale_in_float64,
)
from norm_katas.checks.modules import (
    MISSING,
    backward_grads,
    expect_affine_state_dropped,
    expect_arguments_kept,
    expect_input_unmodified,
    expect_no_weight_and_bias,
    expect_output_like_input,
    expect_registered_state,
    expect_same_grads,
    expect_same_grads_in_float64,
    expect_same_parameters,
    expect_state_dict_round_trip,
    forward_with_grad,
    grads_of,
    load_torch_state,
    paired,
    place_state,
    place_torch_state,
    torch_initialised,
    without_affine,
)
from norm_katas.checks.running_stats import (
    MODES,
    STATS,
    eval_output,
    expect_eval_leaves_stats,
    expect_float64_in_both_modes,
    expect_follows_device_in_both_modes,
    expect_from_scratch_in_both_modes,
    expect_half_like_float32,
    expect_no_running_stats,
    expect_raises_in_mode,
    expect_same_buffers,
    expect_same_grads_in_both_modes,
    expect_several_steps_then_eval,
    expect_stats_match,
    expect_stats_without_history,
    expect_vectorized_in_both_modes,
    in_mode,
    normalized_by_running_stats,
    snapshot,
    stat,
    weight_of_batch,
)
from norm_katas.checks.suite import PerfCase, Suite
from norm_katas.runtime.outcomes import (
    Belongs,
    CannotGrade,
    Hung,
    TimedOut,
    cannot_grade,
    fail,
    fail_for,
    fail_hung,
)

__all__ = [
    "BUILTIN_DROPOUTS",
    "BUILTIN_DROPOUT_MODULES",
    "BUILTIN_NORMS",
    "BUILTIN_NORM_MODULES",
    "BUILTIN_SYNC_NORMS",
    "DEVICE_TOLERANCE",
    "FROM_SCRATCH",
    "HALF_OFFSET",
    "MISSING",
    "MODES",
    "STATS",
    "TOLERANCE",
    "Belongs",
    "CannotGrade",
    "CountingLinear",
    "FixedMask",
    "FunctionKata",
    "Hung",
    "PerfCase",
    "RecordingContext",
    "RecordingLinear",
    "Suite",
    "TimedOut",
    "ZeroSublayer",
    "backward_grads",
    "built_with_attributes",
    "call_backward",
    "call_forward",
    "cannot_grade",
    "computes_in_float64",
    "count_ops",
    "count_python_lines",
    "describe_call",
    "dtype_name",
    "eval_output",
    "expect_affine_state_dropped",
    "expect_arguments_kept",
    "expect_attributes",
    "expect_backward_by_hand",
    "expect_backward_shapes",
    "expect_built_on_device",
    "expect_close",
    "expect_eps_in_the_root",
    "expect_eval_leaves_stats",
    "expect_float64_arithmetic",
    "expect_float64_in_both_modes",
    "expect_follows_device",
    "expect_follows_device_in_both_modes",
    "expect_follows_torch_seed",
    "expect_from_scratch",
    "expect_from_scratch_in_both_modes",
    "expect_function_follows_device",
    "expect_gradcheck",
    "expect_grads_close",
    "expect_half_like_float32",
    "expect_input_unmodified",
    "expect_keep_fraction",
    "expect_like",
    "expect_no_running_stats",
    "expect_no_weight_and_bias",
    "expect_node_of",
    "expect_output_like_input",
    "expect_raises",
    "expect_raises_in_mode",
    "expect_registered_state",
    "expect_rejects_shapes",
    "expect_rounded_once",
    "expect_same_buffers",
    "expect_same_grads",
    "expect_same_grads_in_both_modes",
    "expect_same_grads_in_float64",
    "expect_same_parameters",
    "expect_saves_only_what_backward_needs",
    "expect_scale_free",
    "expect_scale_in_float64",
    "expect_several_steps_then_eval",
    "expect_stable_under_shift",
    "expect_state_dict_round_trip",
    "expect_stats_match",
    "expect_stats_without_history",
    "expect_tensor",
    "expect_through_function",
    "expect_unscaled",
    "expect_vectorized",
    "expect_vectorized_in_both_modes",
    "expect_vectorized_rows",
    "fail",
    "fail_for",
    "fail_hung",
    "forward_with_grad",
    "grads_of",
    "in_mode",
    "influence",
    "load_torch_state",
    "nonzero_values",
    "normalized_by_running_stats",
    "paired",
    "perturbed",
    "place_state",
    "place_torch_state",
    "shape_of",
    "skip_unless_close",
    "snapshot",
    "stat",
    "tensors_in",
    "tolerance",
    "torch_initialised",
    "values_close",
    "weight_of_batch",
    "without_affine",
]
