"""Hidden checks for the BatchNorm kata, each compared with torch.nn.BatchNorm1d/2d.

Interview core first, then torch parity (@pytest.mark.parity): float64 computed in float64,
momentum=None, no tracking, torch's error messages, an empty batch and half-precision inputs.
Which dtype a layer computes in is dtype policy, so the core compares float64 outputs and running
statistics at float32's tolerance: a BatchNorm that computes in float32 whatever it is given
solves the core.

Each core property in every mode where it applies (eps=0.1 where eps must show):

    property                      training                         eval
    statistics, eps in the sqrt   forward_matches_torch            eval_uses_running_stats
    running-stat update           momentum_direction, several_...  eval_leaves_running_stats_...
    gradients                     gradients_match                  gradients_match
    affine=False                  affine_false                     affine_false
"""

from functools import partial

import pytest
import torch
from torch import nn

from norm_katas.checks import (
    PerfCase,
    Suite,
    describe_call,
    eval_output,
    expect_affine_state_dropped,
    expect_arguments_kept,
    expect_close,
    expect_eval_leaves_stats,
    expect_float64_in_both_modes,
    expect_follows_device_in_both_modes,
    expect_from_scratch_in_both_modes,
    expect_half_like_float32,
    expect_input_unmodified,
    expect_like,
    expect_no_running_stats,
    expect_no_weight_and_bias,
    expect_raises_in_mode,
    expect_registered_state,
    expect_same_buffers,
    expect_same_grads_in_both_modes,
    expect_same_parameters,
    expect_several_steps_then_eval,
    expect_stable_under_shift,
    expect_state_dict_round_trip,
    expect_stats_match,
    expect_stats_without_history,
    expect_tensor,
    expect_unscaled,
    expect_vectorized_in_both_modes,
    fail,
    fail_for,
    in_mode,
    influence,
    normalized_by_running_stats,
    paired,
    place_state,
    place_torch_state,
    shape_of,
    stat,
    torch_initialised,
    values_close,
    weight_of_batch,
)

SUITE = Suite()

# (class, input shape) pairs covering (N, C), (N, C, L) and (N, C, H, W).
SHAPES = [
    ("BatchNorm1d", (6, 4)),
    ("BatchNorm1d", (5, 4, 7)),
    ("BatchNorm2d", (3, 4, 5, 6)),
]


def one_step(kata, device, cls, channels, x_shape, spread, centre, **kwargs):
    """The learner's layer, with random running statistics in float64, after one training step
    on x = randn * spread + centre: (it, (running_mean, running_var) before the step, x)."""
    mine, ref = paired(kata, cls, channels, stats=True, **kwargs)
    mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
    before = ref.running_mean.clone(), ref.running_var.clone()
    x = torch.randn(x_shape, dtype=torch.float64, device=device) * spread + centre
    mine(x.clone())  # a copy: a layer that writes into x must not change what it is compared with
    return mine, before, x


def test_parameters(kata):
    """weight and bias are parameters of shape (C,), ones and zeros; the defaults are torch's

    Learnable tensors must be nn.Parameter so that the optimizer, state_dict and .to() see
    them; the constructor arguments stay available as attributes.

    weight: an nn.Parameter of C ones, bias: one of C zeros; num_features, eps, momentum, affine
    and track_running_stats kept as attributes of those names, with torch's defaults: eps 1e-5,
    momentum 0.1, affine and track_running_stats on.

    [initial] The scale starts at one and the shift at zero, as torch's, so that an untrained
    layer passes the normalized input through unchanged; training moves them from there.

    [initial] weight₀ = 1 and bias₀ = 0 in every one of the C channels, the same in every run, never
    random.
    """
    defaults = {"eps": 1e-5, "momentum": 0.1, "affine": True, "track_running_stats": True}
    for cls in ("BatchNorm1d", "BatchNorm2d"):
        expect_same_parameters(getattr(kata, cls)(5), getattr(nn, cls)(5), given=f"{cls}(5)")
        expect_arguments_kept(getattr(kata, cls)(5), f"{cls}(5)", defaults)  # torch's defaults
        kwargs = {"eps": 1e-3, "momentum": None, "affine": True, "track_running_stats": False}
        mine = getattr(kata, cls)(7, **kwargs)
        expect_arguments_kept(mine, describe_call(cls, 7, **kwargs), {"num_features": 7, **kwargs})


def test_buffers(kata):
    """running_mean, running_var and num_batches_tracked are buffers initialised like torch's

    Statistics are state but not learnable: buffers are saved in the state_dict and moved by
    .to(), but never handed to the optimizer.

    Register three buffers: running_mean holding C zeros, running_var holding C ones, and
    num_batches_tracked, a 0-dim long (int64) tensor holding 0.
    """
    for cls in ("BatchNorm1d", "BatchNorm2d"):
        expect_same_buffers(getattr(kata, cls)(5), getattr(nn, cls)(5), given=f"{cls}(5)")


def test_state_dict_round_trip(kata):
    """state_dict loads from nn.BatchNorm1d/2d and into it, both ways

    A checkpoint trained with torch.nn must load into your module, and yours into torch.nn's.

    Use torch's names, shapes and dtypes: weight, bias, running_mean, running_var (all (C,))
    and num_batches_tracked (a 0-dim long tensor).
    """
    for cls in ("BatchNorm1d", "BatchNorm2d"):
        mine, ref = getattr(kata, cls)(3), getattr(nn, cls)(3)
        expect_state_dict_round_trip(mine, ref, given=f"{cls}(3)")


def test_output_like_input(kata, device):
    """output has the input's shape, dtype and device, in training and in eval mode

    Normalizing changes values, not the shape or the dtype of the tensor.

    y has x.shape and x.dtype; the (C,) statistics are reshaped to broadcast along dim 1.
    """
    for dtype in (torch.float32, torch.float64):
        for cls, x_shape in SHAPES:
            mine, _ = paired(kata, cls, 4)
            mine = mine.to(device, dtype)
            x = torch.randn(x_shape, device=device, dtype=dtype)
            for mode in ("training", "eval"):
                mine.train(mode == "training")
                expect_like(mine(x), x, given=f"{cls}(4) in {mode} mode on x {shape_of(x)}")


def test_input_unmodified(kata, device):
    """the input tensor is left unmodified

    The caller still owns x: compute into new tensors instead of overwriting it.

    Write x − μ into a new tensor; an in-place subtraction (the -= operator, or a method whose name
    ends in an underscore) writes into the caller's x.
    """
    for cls, x_shape in SHAPES:
        for mode in ("training", "eval"):
            mine, _ = paired(kata, cls, 4, stats=True)
            mine = mine.to(device).train(mode == "training")
            x = torch.randn(x_shape, device=device)
            expect_input_unmodified(mine, x, given=f"{cls}(4) in {mode} mode")


def test_from_scratch(kata, device):
    """implemented from tensor operations, not the built-in batch norm

    The exercise is the formula and the running averages: F.batch_norm, torch.batch_norm,
    nn.BatchNorm1d/2d and the other built-in norms are off limits here.

    mean, var, sqrt or rsqrt, view/reshape and in-place mul_/add_ are all you need.
    """
    for cls, x_shape in (("BatchNorm1d", (6, 4, 3)), ("BatchNorm2d", (4, 4, 3, 3))):
        mine, _ = paired(kata, cls, 4)
        expect_from_scratch_in_both_modes(mine.to(device), torch.randn(x_shape, device=device))


def test_vectorized(kata, device):
    """vectorized: no Python loop over channels or samples

    Reduce over whole dimensions at once, for every channel together, and let broadcasting
    apply the (C,) statistics.

    One reduction over the batch and spatial dims (0, 2, 3) gives every channel's μ_c at once;
    shaped (1, C, 1, 1) it broadcasts back over x.
    """
    for cls, small_shape, large_shape in (
        ("BatchNorm2d", (2, 2, 3, 3), (16, 64, 8, 8)),
        ("BatchNorm1d", (2, 2, 3), (32, 64, 16)),
    ):
        small, _ = paired(kata, cls, small_shape[1])
        large, _ = paired(kata, cls, large_shape[1])
        xs = torch.randn(small_shape, device=device)
        xl = torch.randn(large_shape, device=device)
        given = f"{cls}({small_shape[1]}) vs {cls}({large_shape[1]})"
        expect_vectorized_in_both_modes(small.to(device), large.to(device), xs, xl, given=given)


def test_to_dtype(kata, device):
    """after .to(torch.float64) parameters and running statistics are float64: all registered

    .to() moves only registered tensors, parameters and buffers, not plain tensor attributes:
    those stay behind, in their old dtype and on their old device.

    Create the running statistics as registered buffers, not as plain tensor attributes, so that
    .to() converts them along with the parameters; eps and momentum stay Python floats, which .to()
    leaves alone.
    """
    mine, _ = paired(kata, "BatchNorm2d", 3, stats=True)
    mine = mine.to(device, torch.float64)
    expect_registered_state(mine, dtype=torch.float64, given="BatchNorm2d(3).to(float64)")


def test_biased_variance_in_training(kata, device):
    """training normalizes with the batch mean and the biased batch variance (divide by m)

    The variance used to normalize is the batch's own spread (the population variance of its m
    values per channel); the unbiased one is only for the running estimate.

    σ²_c = (1/m) Σ (x − μ_c)² over the channel's m values: divide by m, not m − 1.
    """
    x = torch.tensor(
        [[1.0, -2.0, 0.5], [2.0, 0.0, 0.5], [4.0, 2.0, 3.0], [7.0, 4.0, 8.0]],
        dtype=torch.float64,
        device=device,
    )
    bn = kata.BatchNorm1d(3, affine=False).to(device, torch.float64)
    mean = x.mean(0, keepdim=True)
    var = ((x - mean) ** 2).mean(0, keepdim=True)
    expected = (x - mean) / (var + 1e-5).sqrt()
    given = "BatchNorm1d(3, affine=False) in training mode on the 4 rows x = " + str(
        x.cpu().tolist()
    )
    expect_close(bn(x.clone()), expected, given=given, judge_dtype=False)


def test_batchnorm1d_reduces_over_n_l(kata, device):
    """BatchNorm1d on (N, C, L) takes each channel's statistics over N and L together

    A sequence input shares one mean and one variance per channel across every sample and
    every position, as BatchNorm2d shares them across pixels.

    μ_c = the mean of x[n, c, l] over n and l together (m = N·L values per channel) for an (N, C, L)
    input, and over n alone (m = N) for an (N, C) one; σ²_c over the same m values.
    """
    # Which values share a channel's statistics, read off which outputs move when one input
    # does (through the mean and variance it is part of): how they are normalized is other
    # checks' business.
    x = torch.randn(4, 3, 7, device=device, dtype=torch.float64)
    mine = kata.BatchNorm1d(3).to(device, torch.float64)
    expect_channel_statistics(mine, x, given=f"BatchNorm1d(3) in training mode on x {shape_of(x)}")
    expect_variance_of_the_channel(kata.BatchNorm1d, x, device=device)


def test_batchnorm2d_reduces_over_n_h_w(kata, device):
    """BatchNorm2d takes each channel's statistics over (N, H, W) together

    One mean and one variance per channel, shared by every sample and every pixel: not per
    pixel (the batch dim alone) nor per image (H and W alone, which is InstanceNorm).

    μ_c and σ²_c over n, h and w: m = N·H·W values per channel.
    """
    # Which values share a channel's statistics, read off which outputs move when one input
    # does (through the mean and variance it is part of): how they are normalized is other
    # checks' business.
    x = torch.randn(4, 3, 5, 6, device=device, dtype=torch.float64)
    mine = kata.BatchNorm2d(3).to(device, torch.float64)
    expect_channel_statistics(mine, x, given=f"BatchNorm2d(3) in training mode on x {shape_of(x)}")
    expect_variance_of_the_channel(kata.BatchNorm2d, x, device=device)


def test_momentum_direction(kata, device):
    """momentum weighs the new batch: new = (1 - momentum) * old + momentum * batch

    torch's momentum is the weight of the current batch's statistic, the opposite of the beta in an
    optimizer's moving average: a momentum of 0.3 keeps 70 % of the old value.

    running_mean = (1 - momentum) * running_mean + momentum * batch_mean, and so running_var.
    """
    for cls, x_shape in (("BatchNorm1d", (8, 4)), ("BatchNorm2d", (4, 4, 3, 3))):
        mine, (old_mean, _), x = one_step(kata, device, cls, 4, x_shape, 3, 5, momentum=0.3)
        dims = [0, *range(2, x.dim())]
        given = (
            f"{cls}(4, momentum=0.3) with running_mean = "
            f"{[round(v, 3) for v in old_mean.tolist()]} after one training step on x {shape_of(x)}"
        )
        expected = 0.7 * old_mean + 0.3 * x.mean(dims)
        have = stat(mine, "running_mean", given=given)
        # The values are this check's; their dtype (a plain attribute .to() left float32)
        # is the buffers'.
        what = "running_mean (0.7 * old + 0.3 * batch mean)"
        expect_close(have, expected, given=given, what=what, judge_dtype=False)


def test_first_step_from_initial_stats(kata, device):
    """a fresh layer's first step moves the running statistics from their initial 0 and 1

    The running averages start at running_mean = 0 and running_var = 1, and the first batch is
    folded in like every later one: no special case that copies it over them.

    After one step (momentum 0.1): running_mean = 0.9 * 0 + 0.1 * batch mean, and likewise
    running_var = 0.9 * 1 + 0.1 * unbiased batch variance.
    """
    # Against the same layer, holding the same statistics (torch's initial 0 and 1, whatever
    # the layer's own: those are test_buffers'), with 5 batches counted already: the first step
    # must fold the batch in as every later one does. Which way momentum weighs is
    # test_momentum_direction's.
    for cls, x_shape in (("BatchNorm1d", (6, 3)), ("BatchNorm2d", (2, 3, 2, 2))):
        fresh, later = torch_initialised(kata, cls, 3), torch_initialised(kata, cls, 3)
        counted = {"num_batches_tracked": torch.tensor(5)}
        problem = place_state(later, counted, initial={"num_batches_tracked": torch.tensor(0)})
        if problem is not None:
            fail_for("test_buffers", f"{cls}(3): num_batches_tracked: {problem[1]}.")
        fresh, later = fresh.to(device, torch.float64), later.to(device, torch.float64)
        x = torch.randn(x_shape, dtype=torch.float64, device=device) * 2 + 3
        for layer in (fresh, later):
            layer(x.clone())
        given = (
            f"{cls}(3), fresh, after one training step on x {shape_of(x)}, against the same layer "
            "with 5 batches counted already, after the same step"
        )
        for name in ("running_mean", "running_var"):
            have = stat(fresh, name, given=given)
            want = stat(later, name, given=given)
            expect_close(have, want, given=given, what=name, judge_dtype=False, equal_nan=False)


def test_running_var_unbiased(kata, device):
    """running_var is updated with the unbiased batch variance (divide by m - 1)

    running_var stands in for the variance of the whole data at eval time, and a batch's own
    variance underestimates it; torch corrects it by m / (m - 1) before averaging it in.

    running_var = (1 - momentum) * running_var + momentum * var_batch * m / (m - 1).
    """
    for cls, x_shape in (("BatchNorm1d", (4, 3)), ("BatchNorm2d", (2, 3, 2, 2))):
        mine, (old_mean, old_var), x = one_step(kata, device, cls, 3, x_shape, 2, 1)
        dims = [0, *range(2, x.dim())]
        given = (
            f"{cls}(3) with running_var = {[round(v, 3) for v in old_var.tolist()]} after one "
            f"training step on x {shape_of(x)}"
        )
        # The weight of the batch as the layer gives it, read off its running_mean: which way
        # momentum weighs is test_momentum_direction's.
        batch = weight_of_batch(mine, old_mean, x.mean(dims), given=given)
        expected = (1 - batch) * old_var + batch * x.var(dims, unbiased=True)
        have = stat(mine, "running_var", given=given)
        if not values_close(have, expected):
            expect_channel_statistics(
                getattr(kata, cls)(3).to(device, torch.float64), x, given=given
            )
        what = f"running_var ({1 - batch:g} * old + {batch:g} * unbiased var)"
        expect_close(have, expected, given=given, what=what, judge_dtype=False)


def test_eval_leaves_running_stats_unchanged(kata, device):
    """eval mode leaves running_mean, running_var and num_batches_tracked unchanged

    Evaluating a model must not change it: the statistics are updated in training only.

    Update the running statistics only when the module is in training mode and track_running_stats
    is True; in eval mode all three stay as they were.
    """
    for cls, x_shape in SHAPES:
        for momentum in (0.1, None):
            kwargs = {"momentum": momentum}
            mine, _ = paired(kata, cls, 4, stats=True, **kwargs)
            given = f"{describe_call(cls, 4, **kwargs)} in eval mode"
            expect_eval_leaves_stats(mine, x_shape, device=device, given=given)


def test_num_batches_tracked(kata, device):
    """num_batches_tracked counts the training steps (a long tensor; eval does not count)

    Every training-mode forward with tracking is one more batch folded into the statistics; a
    momentum of None needs the count.

    Add one to num_batches_tracked in place on each tracked training step, so that it stays a 0-dim
    long (int64) buffer rather than becoming a Python int or a float.
    """
    for cls, x_shape in (("BatchNorm1d", (4, 3)), ("BatchNorm2d", (2, 3, 2, 2))):
        mine, _ = paired(kata, cls, 3)
        mine = mine.to(device)
        given = f"{cls}(3)"
        # The dtype it is registered with is the buffers' check's; that it stays so is this one's.
        start = stat(mine, "num_batches_tracked", given=given)
        dtype = start.dtype if isinstance(start, torch.Tensor) else torch.long
        for k in range(1, 4):
            mine(torch.randn(x_shape, device=device))
            count = stat(mine, "num_batches_tracked", given=given)
            if not isinstance(count, torch.Tensor) or count.dtype != dtype or count.dim() != 0:
                fail(
                    f"{given}: num_batches_tracked should stay a 0-dim torch.long tensor, "
                    f"got {count!r}."
                )
            if int(count) != k:
                fail(
                    f"{given}: num_batches_tracked after {k} training steps is {int(count)}, "
                    f"expected {k}."
                )
        mine.eval()
        mine(torch.randn(x_shape, device=device))
        count = int(stat(mine, "num_batches_tracked", given=given))
        if count != 3:
            fail(
                f"{given}: num_batches_tracked after 3 training steps and one in eval mode "
                f"is {count}, expected 3."
            )


def test_running_stats_no_autograd_history(kata, device):
    """running statistics carry no autograd history, so training and later backwards work

    The running averages are statistics, not part of the graph: otherwise each step's graph
    stays reachable from the buffers, memory grows every step, and a later backward through
    them fails with "Trying to backward through the graph a second time".

    Update them with gradient tracking switched off (the no_grad context), or from batch statistics
    detached from the graph.
    """
    mine, _ = paired(kata, "BatchNorm2d", 3)
    given = "BatchNorm2d(3) with x.requires_grad=True"
    expect_stats_without_history(
        mine.to(device, torch.float64), (4, 3, 3, 3), device=device, given=given
    )


def test_eps_inside_sqrt(kata, device):
    """eps is added to the variance inside the square root: √(running_var + ε)

    ε keeps the division finite where a channel's variance is 0; it goes under the root, as in
    torch: (x − μ) / (√σ² + ε) and a missing ε differ from it most where ε is large against
    the variance, as here, ε = 0.5 on variances from 0.5 to 3.

    In eval, y = (x − running_mean) / √(running_var + ε) · weight + bias: with ε = 0.5 the same
    as with ε = 0 and running_var + 0.5, which is what this compares, your layer with your layer.
    """
    for cls, x_shape in SHAPES:
        mine, ref = paired(kata, cls, 4, stats=True, eps=0.5)
        shifted = getattr(nn, cls)(4, eps=0.0)
        shifted.load_state_dict(ref.state_dict())
        with torch.no_grad():
            shifted.running_var.add_(0.5)
        twin = getattr(kata, cls)(4, eps=0.0)
        place_torch_state(twin, shifted, given=describe_call(cls, 4, eps=0.0))
        moved = getattr(kata, cls)(4, eps=0.5)  # running_var + 0.5, and eps=0.5 still
        place_torch_state(moved, shifted, given=describe_call(cls, 4, eps=0.5))
        mine, twin, moved = (m.to(device, torch.float64).eval() for m in (mine, twin, moved))
        x = torch.randn(x_shape, dtype=torch.float64, device=device) * 2 + 1
        out = mine(x.clone())
        if values_close(out, moved(x.clone()).detach()):
            continue  # eval ignores running_var: test_eval_uses_running_stats's mistake
        given = (
            f"{cls}(4, eps=0.5) in eval mode on x {shape_of(x)}, against your {cls}(4, eps=0.0) "
            "with running_var + 0.5 (the same √(running_var + ε) where ε goes inside the root)"
        )
        expect_close(out, twin(x.clone()).detach(), given=given, judge_dtype=False)


def test_eval_uses_running_stats(kata, device):
    """eval mode normalizes with running_mean and running_var, not the batch's statistics

    In eval mode (the module's training flag is False) the output must not depend on the rest of the
    batch, so a single sample works too.

    y = (x - running_mean) / sqrt(running_var + eps) * weight + bias.
    """
    # eps = 0.1 as well, with running_var in [0.5, 3]: the default 1e-5 against a variance
    # near 1 moves the output by about 5e-6, inside tolerance, so a missing eps would hide.
    cases = [(*case, eps) for eps in (1e-5, 0.1) for case in (*SHAPES, ("BatchNorm1d", (1, 4)))]
    for cls, x_shape, eps in cases:
        mine, ref = paired(kata, cls, 4, stats=True, eps=eps)
        mine, ref = mine.to(device, torch.float64).eval(), ref.to(device, torch.float64).eval()
        x = torch.randn(x_shape, dtype=torch.float64, device=device) * 2 + 1
        expected = normalized_by_running_stats(x, ref, eps)
        call = describe_call(cls, 4, **({"eps": eps} if eps != 1e-5 else {}))
        given = f"{call} in eval mode, with random running statistics, on x {shape_of(x)}"
        got = eval_output(mine, x, expected, given=given)
        expect_close(got, expected, given=given, judge_dtype=False)
        expect_close(got, ref(x).detach(), given=given, judge_dtype=False)


def test_affine_false(kata, device):
    """affine=False: the layer has no parameters; weight and bias are None

    Without the affine transform the layer has nothing to learn, but the attributes still
    exist; the output is the normalized x itself.

    Register weight and bias as parameters whose value is None: both attributes exist, the module
    lists no parameters, and the output is x̂ itself.
    """
    for cls, x_shape in SHAPES:
        mine = getattr(kata, cls)(4, affine=False)
        given = f"{cls}(4, affine=False)"
        if list(mine.parameters()):
            names = sorted(n for n, _ in mine.named_parameters())
            fail(f"{given} should have no parameters, got {names}.")
        with_affine = getattr(kata, cls)(4)
        expect_no_weight_and_bias(mine, given=given, with_affine=with_affine)
        ref_on, ref_off = getattr(nn, cls)(4), getattr(nn, cls)(4, affine=False)
        expect_affine_state_dropped(with_affine, mine, ref_on, ref_off, given=given)
        # Against the layer's own output with affine, holding the same running statistics:
        # what the layer normalizes with is other checks' business, that nothing scales or
        # shifts the output without affine is this one's.
        mine, ref = paired(kata, cls, 4, affine=False, stats=True)
        place_torch_state(
            with_affine, ref, given=f"{cls}(4)", initial=getattr(nn, cls)(4).state_dict()
        )
        mine, with_affine = mine.to(device), with_affine.to(device)
        for mode in ("eval", "training"):
            in_mode(mode, mine, with_affine)
            x = torch.randn(x_shape, device=device) * 3 + 2
            expect_unscaled(
                mine(x.clone()),
                with_affine(x.clone()),
                dims=(1,),
                given=f"{given} and your {cls}(4) in {mode} mode on x {shape_of(x)}",
            )


def test_numerically_stable(kata, device):
    """stable in float32 when a channel has a large mean (no E[x²] - E[x]² shortcut)

    E[x²] - E[x]² subtracts two huge, nearly equal numbers and loses the significant digits in
    float32 when the mean is large compared with the spread.

    Centre first, then average the squares: xc = x - mean; var = mean(xc²).
    """
    x = 1000 + torch.randn(512, 4, device=device)
    given = f"BatchNorm1d(4, affine=False) in training mode on x = 1000 + randn {shape_of(x)}"
    layers = []

    def fresh(x):
        layers.append(kata.BatchNorm1d(4, affine=False).to(device))
        return layers[-1](x)

    expect_stable_under_shift(fresh, x, 1000, given=given)
    # The running variance after the step, too: the shift leaves it as it is (not the mean).
    centred, shifted = (stat(layer, "running_var", given=given) for layer in layers)
    given += ", against a fresh layer's step on x − 1000 (the same values about 0)"
    expect_close(shifted, centred, given=given, what="running_var after the step", atol=1e-3)


def test_follows_device(kata, device):
    """runs on CUDA in eval and training mode: running statistics move with .to(device)

    Eval mode reads running_mean and running_var: as buffers they move with .to(device), as
    plain tensor attributes they stay on the CPU. Tensors made in forward must be on x's device.

    Register the statistics as buffers, so that .to(device) moves them; any tensor forward creates
    is made on x's device, or derived from x.
    """
    for cls, x_shape in (("BatchNorm2d", (4, 3, 5, 5)), ("BatchNorm1d", (6, 3, 4))):
        for kwargs in ({}, {"affine": False}):
            mine, _ = paired(kata, cls, 3, stats=True, **kwargs)
            name = describe_call(cls, 3, **kwargs)
            expect_follows_device_in_both_modes(mine, x_shape, device=device, name=name)


@pytest.mark.broad
def test_forward_matches_torch(kata, device):
    """training-mode forward matches nn.BatchNorm1d/2d on several shapes, in float32 and float64

    In training mode every channel c is normalized with the mean and variance of its own values
    over the batch (and over L, or H and W), then scaled by weight[c] and shifted by bias[c].

    y = (x - mean) / sqrt(var + eps) * weight + bias, statistics over every dim except dim 1.
    """
    cases = [
        *SHAPES,
        ("BatchNorm1d", (2, 4, 1)),
        ("BatchNorm2d", (1, 4, 3, 2)),
    ]
    # eps = 0.1 as well: at float32's tolerance, which float64 is held to too, the default
    # 1e-5 hides where eps goes.
    for dtype in (torch.float32, torch.float64):
        for eps in (1e-5, 0.1):
            for cls, x_shape in cases:
                mine, ref = paired(kata, cls, 4, eps=eps)
                mine, ref = mine.to(device, dtype), ref.to(device, dtype)
                x = torch.randn(x_shape, device=device, dtype=dtype) * 3 + 1
                given = f"{describe_call(cls, 4, eps=eps)} in training mode on x {shape_of(x)}"
                expect_close(mine(x.clone()), ref(x).detach(), given=given)


@pytest.mark.broad
def test_gradients_match(kata, device):
    """gradients for the input, weight and bias match torch's, in training and eval mode

    In training mode the batch mean and variance depend on x, so the gradient flows through them
    too; autograd does it for you if they stay in the graph.

    No .detach(), .data or in-place edits on the path from x to the output.
    """
    for cls, x_shape in (("BatchNorm1d", (5, 3, 4)), ("BatchNorm2d", (4, 3, 3, 3))):
        make = partial(paired, kata, cls, 3, stats=True)
        expect_same_grads_in_both_modes(make, x_shape, device=device, name=f"{cls}(3)")


@pytest.mark.broad
def test_several_steps_then_eval(kata, device):
    """after three training steps the running statistics and the eval output match torch's

    A real training loop: several training-mode batches from a drifting distribution, then eval mode
    on new data. Each step folds its batch into the running averages, and eval normalizes with them.

    Per step: count += 1; running = (1 - m) * running + m * batch statistic, with the
    unbiased variance (no eps) for running_var; a momentum of 0.0 leaves them as they were.
    """
    # eps 0.1: the running variance takes the batch variance without eps (an rstd's var + eps
    # reused there is off by momentum · eps). momentum 0.0 is a value: nothing moves.
    for momentum, eps in ((0.1, None), (0.5, 0.1), (0.0, None)):
        for cls, x_shape in SHAPES:
            kwargs = {"momentum": momentum} if eps is None else {"eps": eps, "momentum": momentum}
            mine, ref = paired(kata, cls, 4, **kwargs)
            name = describe_call(cls, 4, **kwargs)
            expect_several_steps_then_eval(mine, ref, x_shape, device=device, name=name)


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """a float64 input is computed in float64, as torch does, in training and eval mode

    torch computes the statistics in float32 only for float16 and bfloat16 inputs; upcasting every
    input to float32 also rounds a float64 input to float32, and with it the running statistics.

    compute dtype = float32 for float16/bfloat16 inputs, x.dtype otherwise: upcast only those.
    """
    mine, _ = paired(kata, "BatchNorm2d", 3, stats=True)
    mine = mine.to(device, torch.float64)
    x = torch.randn(4, 3, 5, 5, dtype=torch.float64, device=device)
    expect_float64_in_both_modes(mine, x, name="BatchNorm2d(3).to(float64)")


@pytest.mark.parity
def test_cumulative_average_momentum_none(kata, device):
    """momentum=None: the running statistics are the plain average over all batches so far

    With a momentum of None every batch weighs the same: after k batches running_mean is the average
    of the k batch means, and the initial zeros and ones are forgotten.

    factor = 1 / num_batches_tracked (read after incrementing it), then the usual update.
    """
    for cls, x_shape in (("BatchNorm1d", (6, 3)), ("BatchNorm2d", (3, 3, 2, 2))):
        mine, ref = paired(kata, cls, 3, momentum=None)
        mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
        dims = [0, *range(2, len(x_shape))]
        means, variances = [], []
        for k in range(3):
            x = torch.randn(x_shape, dtype=torch.float64, device=device) * (k + 1) + 2 * k
            means.append(x.mean(dims))
            variances.append(x.var(dims, unbiased=True))
            steps = f"{k + 1} training step{'s' if k else ''}"
            given = f"{cls}(3, momentum=None) after {steps} on x {shape_of(x)}"
            expect_close(mine(x.clone()), ref(x).detach(), given=given)
            have = stat(mine, "running_mean", given=given)
            expected = torch.stack(means).mean(0)
            expect_close(
                have, expected, given=given, what="running_mean (average of the batch means)"
            )
            have = stat(mine, "running_var", given=given)
            expected = torch.stack(variances).mean(0)
            expect_close(
                have,
                expected,
                given=given,
                what="running_var (average of the unbiased batch variances)",
            )
            expect_stats_match(mine, ref, given=given, when="at that point")


@pytest.mark.parity
def test_track_running_stats_false(kata, device):
    """track_running_stats=False: no buffers, and batch statistics in both modes

    Without running estimates there is nothing to fall back on, so eval mode normalizes with
    the batch's statistics as training does.

    Register running_mean, running_var and num_batches_tracked as buffers whose value is None;
    normalize with the batch's statistics whenever the module is training or has no running_mean.
    """
    for cls, x_shape in SHAPES:
        mine = getattr(kata, cls)(4, track_running_stats=False)
        given = f"{cls}(4, track_running_stats=False)"
        expect_no_running_stats(mine, given=given)
        buffers = sorted(n for n, _ in mine.named_buffers())
        if buffers:
            fail(f"{given} should have no buffers, got {buffers}.")
        expect_state_dict_round_trip(
            getattr(kata, cls)(4, track_running_stats=False),
            getattr(nn, cls)(4, track_running_stats=False),
            given=given,
        )
        mine, ref = paired(kata, cls, 4, track_running_stats=False)
        mine, ref = mine.to(device), ref.to(device)
        for mode in ("training", "eval"):
            in_mode(mode, mine, ref)
            x = torch.randn(x_shape, device=device) * 3 + 2
            expect_close(
                mine(x.clone()), ref(x).detach(), given=f"{given} in {mode} mode on x {shape_of(x)}"
            )


@pytest.mark.parity
def test_single_value_per_channel_raises(kata, device):
    """one value per channel raises ValueError in training, or in eval with track_running_stats off

    The variance of a single value is 0, so batch statistics would turn it into all zeros.
    A single sample with L > 1, or eval mode with running statistics, is fine.

    When batch statistics are needed and each channel holds a single value (N·L = 1, or N·H·W = 1),
    fail with a ValueError that says more than one value per channel is expected and gives the
    input's size.
    """
    cases = [
        ("BatchNorm1d", (1, 3), {}, True),
        ("BatchNorm1d", (1, 3, 1), {}, True),
        ("BatchNorm2d", (1, 3, 1, 1), {}, True),
        ("BatchNorm1d", (1, 3), {"track_running_stats": False}, False),
    ]
    for cls, x_shape, kwargs, training in cases:
        bn = getattr(kata, cls)(3, **kwargs).to(device)
        x = torch.randn(x_shape, device=device)
        expect_raises_in_mode(bn, x, training=training, name=describe_call(cls, 3, **kwargs))
    for cls, x_shape, training in (
        ("BatchNorm1d", (1, 3, 4), True),
        ("BatchNorm2d", (1, 3, 1, 1), False),
    ):
        mine, ref = paired(kata, cls, 3, stats=True)
        mine, ref = mine.to(device).train(training), ref.to(device).train(training)
        x = torch.randn(x_shape, device=device)
        mode = "training" if training else "eval"
        given = f"{cls}(3) in {mode} mode on x {shape_of(x)}"
        try:
            out = mine(x.clone())
        except ValueError as e:
            why = (
                "there is more than one value per channel to normalize with"
                if training
                else "eval mode normalizes with the running statistics, not the batch's"
            )
            fail(f"{given} raised ValueError ({e}), but {why}.")
        expect_close(out, ref(x).detach(), given=given)


@pytest.mark.parity
def test_wrong_rank_raises(kata, device):
    """an input of the wrong rank raises ValueError, as torch does

    BatchNorm1d takes (N, C) or (N, C, L), BatchNorm2d takes (N, C, H, W); without a check a
    3D input to BatchNorm2d would silently be normalized like BatchNorm1d.

    Check the number of dimensions first, BatchNorm2d accepting 4 only and BatchNorm1d 2 or 3, and
    fail with a ValueError that names the expected rank and the one given.
    """
    cases = [("BatchNorm1d", (2, 3, 4, 5)), ("BatchNorm1d", (3,)), ("BatchNorm2d", (2, 3, 4)),
             ("BatchNorm2d", (2, 3)), ("BatchNorm2d", (2, 3, 4, 5, 2))]  # fmt: skip
    for cls, x_shape in cases:
        for training in (True, False):
            bn = getattr(kata, cls)(3).to(device)
            x = torch.randn(x_shape, device=device)
            expect_raises_in_mode(bn, x, training=training, name=f"{cls}(3)")


@pytest.mark.parity
def test_empty_batch(kata, device):
    """an empty batch (N = 0) gives an empty output and puts no NaN in the running statistics

    The mean of zero values is NaN. torch returns an empty output, still counts the step in
    num_batches_tracked, but leaves running_mean and running_var as they were.

    Count the step in num_batches_tracked as usual, but update running_mean and running_var only
    when the batch holds at least one element.
    """
    for cls, x_shape in (
        ("BatchNorm1d", (0, 4)),
        ("BatchNorm1d", (0, 4, 3)),
        ("BatchNorm2d", (0, 4, 2, 2)),
    ):
        mine, ref = paired(kata, cls, 4, stats=True)
        mine, ref = mine.to(device), ref.to(device)
        x = torch.randn(x_shape, device=device)
        for mode in ("training", "eval"):
            in_mode(mode, mine, ref)
            given = f"{cls}(4) in {mode} mode on an empty x {shape_of(x)}"
            expect_like(mine(x), x, given=given)
            ref(x)
            expect_stats_match(mine, ref, given=given, when="afterwards")


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, device, dtype):
    """half-precision inputs work, in a half layer and in a float32 one (as under autocast)

    Under mixed precision a float32 BatchNorm receives float16 activations and must hand the
    same dtype on; the float32 weight would otherwise promote the result to float32.

    Compute in the compute dtype, then cast the result back to x's dtype before it leaves forward.
    """
    x = torch.randn(4, 8, 5, 5, device=device).to(dtype)
    expect_half_like_float32(partial(paired, kata, "BatchNorm2d", 8), x, name="BatchNorm2d(8)")


def expect_channel_statistics(layer, x, *, given, probe=1):
    """In training mode, changing one value of channel `probe` of x changes every output of
    that channel, over the batch and every position, and no output of another channel: the
    channel's mean and variance are taken over all of N, L (or H and W) together, and over
    nothing else (see influence). Where a check reading the batch statistics finds them
    otherwise, it fails for the check of the layer's axes."""
    index = (0, probe) + (0,) * (x.dim() - 2)
    # Then with a value of another sample and position of the channel moved back as much:
    # the channel's mean stays, its variance does not.
    counter = (1, probe) + (1,) * (x.dim() - 2)
    for back in (None, counter):
        moved = influence(layer.train(), x, index, given=given, counter=back)
        moved = moved.transpose(0, 1).reshape(x.shape[1], -1)
        channels = [c for c in range(x.shape[1]) if moved[c].any()]
        if not (channels == [probe] and bool(moved[probe].all())):
            break
    else:
        return
    owner = (
        "test_batchnorm2d_reduces_over_n_h_w"
        if x.dim() == 4
        else ("test_batchnorm1d_reduces_over_n_l")
    )
    where = f"x[{', '.join(map(str, index))}]"
    if back is not None:
        where += (
            f" up and x[{', '.join(map(str, back))}] down as much (the channel's mean "
            "unchanged, its variance not)"
        )
    said = f"changing {where} changed outputs of channels {channels}"
    if probe in channels and not bool(moved[probe].all()):
        said += f", of channel {probe} only {int(moved[probe].sum())} of {moved.shape[1]}"
    fail_for(
        owner,
        f"{given}: {said}; expected all {moved.shape[1]} outputs of channel {probe} (its mean "
        "and variance are the whole channel's, over the batch and every position) and no other.",
    )


def expect_variance_of_the_channel(cls, x, *, device):
    """The variance a training step divides by is the spread of the channel's values over the
    batch and every position together: read off the output of BatchNorm(C, eps=1e-10, affine=False),
    (x − μ_c) / y = σ_c, and compared with the variance over all m values, over m or m − 1
    (which of the two is test_biased_variance_in_training's to judge). An average of
    per-position (or per-sample) variances misses the spread between them."""
    # Positions whose means differ: the spread between them is what a per-position variance
    # leaves out.
    x = x + torch.arange(x[0, 0].numel(), dtype=x.dtype, device=device).reshape(x.shape[2:])
    layer = cls(x.shape[1], eps=1e-10, affine=False).to(device, torch.float64).train()
    y = expect_tensor(layer(x.clone())).detach()
    if y.shape != x.shape:
        return  # test_output_like_input's mistake
    dims = [0, *range(2, x.dim())]
    centred = x - x.mean(dims, keepdim=True)
    m = centred[:, 0].numel()
    var = centred.square().mean(dims)
    mine = (centred.square().sum(dims) / (y * centred).sum(dims)).square()  # σ_c², read off y
    if (
        torch.isclose(mine, var, rtol=1e-6).all()
        or torch.isclose(mine, var * m / (m - 1), rtol=1e-6).all()
    ):
        return
    c = int((~torch.isclose(mine, var, rtol=1e-6)).nonzero()[0])
    name = "BatchNorm2d" if x.dim() == 4 else "BatchNorm1d"
    over = "N, H and W" if x.dim() == 4 else "N and L"
    owner = (
        "test_batchnorm2d_reduces_over_n_h_w"
        if x.dim() == 4
        else "test_batchnorm1d_reduces_over_n_l"
    )
    fail_for(
        owner,
        f"{name}({x.shape[1]}, eps=1e-10, affine=False) in training mode on x {shape_of(x)}, whose "
        f"positions have different means: channel {c} was divided by √{mine[c].item():.6g} (read "
        f"off its output), where the variance of its {m} values over {over} together is "
        f"{var[c].item():.6g} ({(var[c] * m / (m - 1)).item():.6g} over m − 1). An average of "
        "per-position variances leaves out the spread between the positions: take the variance "
        "over all of them at once.",
    )


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your BatchNorm2d and nn.BatchNorm2d on a batch of feature maps."""
    shape = (64, 256, 56, 56) if device.type == "cuda" else (16, 64, 32, 32)
    mine, ref = paired(kata, "BatchNorm2d", shape[1])
    mine, ref = mine.to(device), ref.to(device)
    x = torch.randn(shape, device=device, requires_grad=True)
    given = f"BatchNorm2d({shape[1]}) in training on x {shape_of(x)}"
    return PerfCase.of_layers(given, mine, ref, x, builtin_name="nn.BatchNorm2d")
