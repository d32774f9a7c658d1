"""Self-tests for what the checks' titles claim: every "not X" is proven by a wrong file.

A title (a check's first docstring line) that says "not X", "no X", "never X", "without X"
claims the check catches X. Each such X, each alternative of "not A or B" apart, is listed in
PROOFS with the catalogue files that make that mistake; each names the check as its EXPECT or
ALSO, so test_graders.test_catalogue_entry proves the check fails it. A new negative claim
without its proof fails here: add the wrong file, or say in the title only what the check
verifies.
"""

from __future__ import annotations

import ast
import re

import pytest

from norm_katas.content import registry

CATALOGUE = registry.ROOT / "tests" / "catalogue"
MARKER = re.compile(r"""\b(EXPECT|ALSO)\s*=\s*["']([^"']+)["']""")
# The negated part of a title: after the negative word, to a colon, a semicolon, a bracket or
# a clause of its own (", and ...", ", as torch does").
NEGATIVE = re.compile(
    r"\b(?:not|never|no|nor|without|nothing)\b([^:;()]*?)"
    r"(?=[:;()]|, (?:and|as|so|in|one|with)\b|$)",
    re.I,
)


def negative_claims(title: str) -> list[str]:
    """The X of each "not X" in a title, "not A or B" (and "not A, B or C") split apart."""
    claims = []
    for match in NEGATIVE.finditer(title):
        parts = re.split(r"\s+or\s+|\s+nor\s+", match[1])
        if len(parts) > 1:
            parts = [p for part in parts for p in part.split(", ")]
        claims += [p.strip() for p in parts if p.strip()]
    return claims


def titles() -> dict[tuple[str, str], str]:
    """(kata's suite stem, check) -> its title, for every check of every suite."""
    found = {}
    for kata in registry.load():
        stem = kata.suite.stem.removeprefix("test_")
        for node in ast.parse(kata.suite.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                doc = ast.get_docstring(node) or ""
                found[stem, node.name] = " ".join(doc.split("\n\n")[0].split())
    return found


# (kata, check, the X of its "not X") -> the catalogue files (stems) that make mistake X.
PROOFS: dict[tuple[str, str, str], list[str]] = {
    ("batchnorm", "test_from_scratch", "the built-in batch norm"): ["calls_builtin"],
    ("batchnorm", "test_num_batches_tracked", "count"): ["eval_updates_running_stats"],
    ("batchnorm", "test_running_stats_no_autograd_history", "autograd history"): [
        "running_stats_in_graph"
    ],
    ("batchnorm", "test_eval_uses_running_stats", "the batch's statistics"): [
        "eval_uses_batch_stats"
    ],
    ("batchnorm", "test_affine_false", "parameters"): ["affine_off_keeps_params"],
    ("batchnorm", "test_numerically_stable", "E[x²] - E[x]² shortcut"): [
        "mean_of_squares_shortcut"
    ],
    ("batchnorm", "test_track_running_stats_false", "buffers"): ["tracks_anyway"],
    ("batchnorm", "test_empty_batch", "NaN in the running statistics"): ["empty_batch_writes_nan"],
    ("batchnorm_backward", "test_backward_by_hand", "autograd inside it"): [
        "reruns_forward_under_autograd"
    ],
    ("batchnorm_backward", "test_saves_only_what_backward_needs", "autograd history"): [
        "keeps_input_graph"
    ],
    ("batchnorm_backward", "test_follows_device", "on the CPU"): ["count_on_cpu"],
    ("dropout", "test_attributes", "parameters"): ["scale_parameter"],
    ("dropout", "test_from_scratch", "the built-in dropout"): ["calls_builtin"],
    ("dropout", "test_p_one_gives_zeros", "NaN"): ["nan_at_p_one", "where_nan_gradient"],
    ("dropout", "test_eval_is_identity", "rescaling"): ["drops_in_eval", "scales_in_eval"],
    ("dropout", "test_to_dtype", "float32 tensor"): ["scale_plain_tensor"],
    ("droppath", "test_attributes", "state"): ["scale_buffer"],
    ("droppath", "test_vectorized", "Python loop over the samples"): ["python_random_per_sample"],
    ("droppath", "test_eval_is_identity", "rescaling"): ["scales_in_eval"],
    ("droppath", "test_whole_sample_dropped", "per element"): ["per_element_mask"],
    ("droppath", "test_drop_prob_one_gives_zeros", "NaN"): ["nan_at_drop_prob_one"],
    ("droppath", "test_computes_in_float64", "through float32"): ["computes_in_float32"],
    ("groupnorm", "test_from_scratch", "the built-in group norm"): ["calls_builtin"],
    ("groupnorm", "test_to_dtype", "plain"): ["eps_tensor_attribute"],
    ("groupnorm", "test_statistics_per_sample", "the batch's"): ["stats_over_batch"],
    ("groupnorm", "test_biased_variance", "m - 1"): ["unbiased_variance"],
    ("groupnorm", "test_no_affine", "parameters"): ["affine_off_keeps_params"],
    ("groupnorm", "test_numerically_stable", "E[x²] - E[x]² shortcut"): [
        "mean_of_squares_shortcut"
    ],
    ("groupnorm", "test_follows_device", "is created on the CPU"): ["ones_on_cpu_without_affine"],
    ("groupnorm", "test_computes_in_float64", "rounded through float32"): [
        "fp32_groupnorm_fairseq",
        "stats_in_float32",
    ],
    ("instancenorm", "test_from_scratch", "the built-in instance norm"): [
        "calls_builtin",
        "builds_on_normbase",
    ],
    ("instancenorm", "test_no_parameters_by_default", "parameters"): ["affine_on_by_default"],
    ("instancenorm", "test_no_running_stats_by_default", "buffers"): ["tracks_by_default"],
    ("instancenorm", "test_num_batches_tracked_stays_zero", "counts batches"): [
        "counts_batches",
        "cumulative_momentum_none",
    ],
    ("instancenorm", "test_running_stats_no_autograd_history", "autograd history"): [
        "running_stats_in_graph"
    ],
    ("instancenorm", "test_vectorized", "Python loop over channels"): ["channel_loop"],
    ("instancenorm", "test_vectorized", "samples"): ["sample_loop"],
    ("instancenorm", "test_no_warning_when_channels_match", "warning"): ["warns_on_every_forward"],
    ("instancenorm", "test_numerically_stable", "E[x²] − E[x]² shortcut"): ["one_pass_variance"],
    ("layernorm_backward", "test_numerically_stable", "E[x²] − E[x]² shortcut"): [
        "one_pass_variance"
    ],
    ("batchnorm_backward", "test_numerically_stable", "E[x²] − E[x]² shortcut"): [
        "one_pass_variance"
    ],
    ("layernorm", "test_from_scratch", "the built-in layer norm"): [
        "calls_builtin",
        "group_norm_trick",
    ],
    ("layernorm", "test_statistics_per_sample", "the batch's"): ["normalizes_over_batch"],
    ("layernorm", "test_constant_input", "NaN"): ["no_eps"],
    ("layernorm", "test_biased_variance", "N - 1"): ["unbiased_variance"],
    ("layernorm", "test_no_elementwise_affine", "parameters"): ["affine_off_keeps_params"],
    ("layernorm", "test_numerically_stable", "E[x²] - E[x]² shortcut"): [
        "mean_of_squares_shortcut"
    ],
    ("layernorm", "test_to_dtype", "plain"): ["eps_tensor_attribute"],
    ("layernorm", "test_follows_device", "is created on the CPU"): ["ones_on_cpu"],
    ("layernorm", "test_computes_in_float64", "rounded through float32"): [
        "fp32_layernorm_fairseq",
        "stats_in_float32",
    ],
    ("layernorm", "test_no_bias", "bias parameter"): ["ignores_bias_flag"],
    ("layernorm_backward", "test_backward_by_hand", "autograd inside it"): [
        "reruns_forward_under_autograd"
    ],
    ("layernorm_backward", "test_saves_only_what_backward_needs", "autograd history"): [
        "keeps_input_graph",
        "saves_x_and_x_hat",
    ],
    ("layernorm_backward", "test_follows_device", "on the CPU"): ["row_count_on_cpu"],
    ("prepost_norm", "test_two_distinct_norms", "parameters"): ["shared_norm"],
    ("prepost_norm", "test_from_scratch", "with nn.TransformerEncoderLayer"): [
        "fused_kernel",
        "hidden_builtin",
        "subclasses_builtin",
    ],
    ("prepost_norm", "test_attention_over_sequence", "across the batch"): [
        "attention_not_batch_first"
    ],
    ("prepost_norm", "test_dropout_off_in_eval", "dropout"): ["functional_dropout_always_on"],
    ("prepost_norm", "test_follows_device", "is created on the CPU"): ["padding_mask_on_cpu"],
    ("rmsnorm", "test_from_scratch", "the built-in RMS norm"): [
        "calls_builtin",
        "torch_rms_norm_alias",
        "wraps_nn_rmsnorm",
    ],
    ("rmsnorm", "test_zero_input", "NaN"): ["no_eps"],
    ("rmsnorm", "test_statistics_per_sample", "the batch's"): ["mean_over_every_dim"],
    ("rmsnorm", "test_root_mean_square", "by its L2 norm"): ["l2_norm_not_rms"],
    ("rmsnorm", "test_weight_scales_each_element", "1 + weight"): ["gemma_one_plus_weight"],
    ("rmsnorm", "test_no_elementwise_affine", "parameters"): ["affine_off_keeps_weight"],
    ("rmsnorm", "test_to_dtype", "a plain tensor"): ["eps_tensor_attribute"],
    ("rmsnorm", "test_follows_device", "is created on the CPU"): ["eps_tensor_on_cpu"],
    ("rmsnorm", "test_computes_in_float64", "rounded through float32"): [
        "computes_in_float32",
        "llama_hf_float32",
        "llama_meta_float32",
    ],
    ("rmsnorm", "test_half_large_values", "overflow"): ["computes_in_half"],
    ("syncbatchnorm", "test_from_scratch", "torch's batch norm kernels"): ["calls_builtin"],
    ("syncbatchnorm", "test_every_rank_joins_the_same_collectives", "deadlock"): [
        "sync_on_rank0_only"
    ],
    ("syncbatchnorm", "test_communicates_statistics_only", "the activations"): [
        "gathers_the_whole_batch"
    ],
    ("triton_rmsnorm", "test_fp32_accumulation", "overflow"): ["half_accumulation"],
    ("fused_add_rmsnorm", "test_fp32_accumulation", "overflow"): ["half_accumulation"],
    ("fused_add_rmsnorm", "test_residual_rounded_before_norm", "of the float32 sum"): [
        "unrounded_sum",
        "rstd_of_unrounded_sum",
    ],
    ("fused_add_rmsnorm", "test_race_free", "update the same element at once"): ["racy_row_split"],
    ("triton_rmsnorm", "test_race_free", "update the same element at once"): ["racy_row_split"],
    ("spectral_norm", "test_buffers", "autograd history"): ["warm_up_recorded"],
    ("triton_layernorm", "test_reduction_race_free", "update the same element at once"): [
        "racy_accumulation",
        "racy_tutorial_groups",
        "forward_row_split_racy",
    ],
    ("triton_softmax", "test_race_free", "update the same element at once"): ["racy_row_split"],
    ("batchnorm", "test_vectorized", "Python loop over channels"): ["channel_loop"],
    ("batchnorm", "test_vectorized", "samples"): ["sample_loop"],
    ("batchnorm_backward", "test_from_scratch", "its backward"): ["calls_native_backward"],
    ("batchnorm_backward", "test_vectorized", "Python loop over channels"): ["channel_loop"],
    ("batchnorm_backward", "test_vectorized", "samples"): ["sample_loop"],
    ("batchnorm_backward", "test_from_scratch", "the built-in batch norm"): ["calls_builtin"],
    ("dropout", "test_vectorized", "elements"): ["element_loop", "python_random_mask"],
    ("dropout", "test_vectorized", "Python loop over rows"): ["row_loop"],
    ("dropout", "test_elements_dropped_independently", "whole rows"): ["drops_whole_rows"],
    ("dropout", "test_elements_dropped_independently", "columns"): ["drops_whole_columns"],
    ("dropout", "test_elements_dropped_independently", "channels"): ["drops_whole_channels"],
    ("dropout", "test_elements_dropped_independently", "fixed count"): ["fixed_count_by_shuffle"],
    ("droppath", "test_from_scratch", "a built-in dropout"): ["calls_builtin"],
    ("droppath", "test_draws_per_sample_not_per_batch", "the whole batch at once"): [
        "batch_shared_draw"
    ],
    ("droppath", "test_to_dtype", "float32 tensor"): ["keep_prob_tensor_attribute"],
    ("groupnorm", "test_vectorized", "groups"): ["group_loop"],
    ("groupnorm", "test_vectorized", "Python loop over samples"): ["sample_loop"],
    ("groupnorm", "test_vectorized", "channels"): ["channel_loop"],
    ("layernorm", "test_vectorized", "Python loop over rows"): ["row_loop"],
    ("layernorm", "test_vectorized", "elements"): ["element_loop"],
    ("layernorm_backward", "test_from_scratch", "the built-in layer norm"): ["calls_builtin"],
    ("layernorm_backward", "test_from_scratch", "its backward"): ["calls_native_backward"],
    ("layernorm_backward", "test_vectorized", "elements"): ["element_loop"],
    ("layernorm_backward", "test_vectorized", "Python loop over rows"): ["row_loop"],
    ("rmsnorm_backward", "test_backward_by_hand", "autograd inside it"): [
        "reruns_forward_under_autograd"
    ],
    ("rmsnorm_backward", "test_saves_only_what_backward_needs", "autograd history"): [
        "keeps_input_graph",
        "saves_x_and_x_hat",
    ],
    ("rmsnorm_backward", "test_follows_device", "on the CPU"): ["ones_on_cpu"],
    ("rmsnorm_backward", "test_from_scratch", "the built-in rms norm"): ["calls_builtin"],
    ("rmsnorm_backward", "test_vectorized", "elements"): ["element_loop"],
    ("rmsnorm_backward", "test_vectorized", "Python loop over rows"): ["row_loop"],
    ("prepost_norm", "test_vectorized", "Python loop over the batch"): ["batch_loop"],
    ("prepost_norm", "test_vectorized", "the sequence positions"): ["position_loop"],
    ("rmsnorm", "test_vectorized", "Python loop over rows"): ["row_loop"],
    ("rmsnorm", "test_vectorized", "elements"): ["element_loop"],
    ("rmsnorm", "test_no_mean_centring", "mean is subtracted"): ["layernorm_centring"],
    ("rmsnorm", "test_no_mean_centring", "its standard deviation"): ["divides_by_std"],
    ("syncbatchnorm", "test_vectorized", "Python loop over channels"): ["channel_loop"],
    ("syncbatchnorm", "test_vectorized", "samples"): ["sample_loop"],
    ("welford", "test_batch_of_one", "NaN"): ["batch_m2_from_unbiased_var"],
    ("welford", "test_computes_in_float64", "is rounded to float32"): [
        "upcasts_with_float",
        "casts_only_half",
    ],
    ("welford", "test_constant_memory", "kept"): [
        "keeps_the_rows",
        "keeps_rows_in_records",
        "keeps_rows_as_numbers",
    ],
    ("welford", "test_empty_batch", "NaN from its 0 / 0 mean"): ["empty_batch_nan"],
    ("welford", "test_follows_device", "on the CPU"): ["state_on_the_cpu"],
    ("welford", "test_large_mean_float32", "E[x²] − E[x]² shortcut"): ["naive_sum_of_squares"],
    ("welford", "test_merge_leaves_other_unmodified", "tensor with it"): [
        "merge_shares_tensors",
        "merge_adopts_then_merges_in_place",
    ],
    ("welford", "test_merge_weights_by_counts", "the two sides equally"): [
        "merge_weights_by_batches"
    ],
    ("welford", "test_vectorized", "Python loop over them"): ["loops_over_features"],
    ("bn_fold", "test_from_scratch", "torch's fusion"): ["calls_torch_fusion"],
    ("bn_fold", "test_uses_running_statistics", "the batch's"): ["batch_statistics"],
    ("bn_fold", "test_plain_layer", "after it"): ["scales_after_the_conv"],
    ("bn_fold", "test_follows_device", "made on the CPU on the way"): ["zeros_on_cpu"],
    ("dyt", "test_alpha_inside_tanh", "α · tanh"): ["tanh_then_alpha"],
    ("dyt", "test_computes_in_float64", "rounded through float32"): ["tanh_in_float32"],
    ("spectral_norm", "test_buffers", "parameters"): ["u_v_parameters"],
    ("spectral_norm", "test_from_scratch", "an SVD"): ["svdvals_sigma"],
    ("spectral_norm", "test_from_scratch", "an eigensolver"): ["eigvalsh_sigma"],
    ("spectral_norm", "test_from_scratch", "torch's spectral_norm"): ["calls_torch_spectral_norm"],
    ("spectral_norm", "test_training_forward_iterates", "only at the start"): [
        "iterates_at_init_only"
    ],
    ("spectral_norm", "test_no_iterations_in_eval", "power step"): ["iterates_in_eval"],
    ("spectral_norm", "test_divides_by_sigma", "‖W‖_F"): ["frobenius_norm"],
    ("spectral_norm", "test_eps_used", "blown up to length 1"): ["ignores_eps"],
    ("spectral_norm", "test_eps_like_torch", "ε added to the norm"): ["eps_added_to_norm"],
}


def test_every_negative_claim_has_its_wrong_file() -> None:
    claimed = {(k, c, x) for (k, c), title in titles().items() for x in negative_claims(title)}
    missing = sorted(claimed - set(PROOFS))
    assert not missing, f"negative claims with no wrong file in PROOFS: {missing}"
    stale = sorted(set(PROOFS) - claimed)
    assert not stale, f"PROOFS names claims no title makes any more: {stale}"


@pytest.mark.parametrize(("kata", "check", "claim"), sorted(PROOFS))
def test_each_proof_fails_its_check(kata: str, check: str, claim: str) -> None:
    files = PROOFS[kata, check, claim]
    assert files, f"{kata}::{check}: no wrong file proves 'not {claim}'"
    for stem in files:
        path = CATALOGUE / kata / f"{stem}.py"
        assert path.exists(), f"{path} does not exist"
        found = dict(MARKER.findall(path.read_text()))
        named = [found.get("EXPECT", ""), *(n.strip() for n in found.get("ALSO", "").split(","))]
        assert check in named, f"{path.name} names {check} neither as EXPECT nor in ALSO"


def test_the_parser_splits_alternatives() -> None:
    title = "x is divided by its root mean square, not by its L2 norm or its standard deviation"
    assert negative_claims(title) == ["by its L2 norm", "its standard deviation"]
    assert negative_claims("vectorized: no Python loop over rows or elements") == [
        "Python loop over rows",
        "elements",
    ]
    assert negative_claims("a float64 input is computed in float64, as torch does") == []
