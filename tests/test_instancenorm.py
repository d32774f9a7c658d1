"""Hidden checks for the InstanceNorm kata, each compared with torch.nn.InstanceNorm1d/2d.

Interview core first, then torch parity (@pytest.mark.parity): float64 computed in float64,
momentum=None as torch treats it (running statistics frozen), num_batches_tracked left at 0,
running statistics updated in place, torch's errors and its warning (only on a mismatch),
non-contiguous inputs, and half-precision inputs. Which dtype a layer computes in is dtype
policy, so the core compares float64 outputs and running statistics at float32's tolerance.

Every call of the learner's layer gets a copy of x (or runs after torch's): a layer that writes
into its input must not change what it is compared with, nor the shape a message states.

Each core check judges its own property only, read where the others' mistakes do not reach:
the defaults are the default checks' (the others spell both flags out), which values share
statistics is read off which outputs move with one input (influence), eps by the layer's own
outputs where its statistics are not torch's, affine and unbatched inputs against the layer's
own output without affine and for a batch of one. Each property in every mode where it
applies:

    property                        training                         eval
    defaults (no affine, no stats)  no_parameters/no_running_stats_by_default
    per-sample statistics           statistics_per_sample_...        eval_without_running_stats
    biased variance                 biased_variance                  eval_uses_running_stats
    eps in the sqrt                 eps_inside_sqrt                  eps_inside_sqrt
    unbatched (C, L) / (C, H, W)    unbatched_input                  unbatched_input
    running-stat update             running_mean_/running_var_...    eval_leaves_running_stats_...
    affine=True                     affine_per_channel               eval_uses_running_stats
    gradients                       gradients_match                  gradients_match
"""

import itertools
import warnings
from functools import partial

import pytest
import torch
from torch import nn

from norm_katas.checks import (
    HALF_OFFSET,
    MISSING,
    STATS,
    PerfCase,
    Suite,
    describe_call,
    dtype_name,
    eval_output,
    expect_arguments_kept,
    expect_close,
    expect_eps_in_the_root,
    expect_eval_leaves_stats,
    expect_float64_in_both_modes,
    expect_follows_device_in_both_modes,
    expect_from_scratch_in_both_modes,
    expect_half_like_float32,
    expect_like,
    expect_no_running_stats,
    expect_no_weight_and_bias,
    expect_raises,
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
    expect_vectorized_in_both_modes,
    fail,
    fail_for,
    in_mode,
    influence,
    normalized_by_running_stats,
    paired,
    place_torch_state,
    shape_of,
    stat,
    values_close,
    weight_of_batch,
)

SUITE = Suite()

# The layers' settings, both flags spelled out: the defaults (no affine, no tracking) are the
# business of the two checks named for them, and a wrong default is no other check's mistake.
OFF = {"affine": False, "track_running_stats": False}
AFFINE = {"affine": True, "track_running_stats": False}
TRACK = {"affine": False, "track_running_stats": True}
FULL = {"affine": True, "track_running_stats": True}
CLASSES = ("InstanceNorm1d", "InstanceNorm2d")
# The check named for each (sample, channel)'s own statistics, which others' reads rely on.
PER_SAMPLE = "test_statistics_per_sample_and_channel"


def test_no_parameters_by_default(kata):
    """affine is off by default: weight and bias are None and there are no parameters

    Unlike BatchNorm, InstanceNorm1d/2d(C) learns nothing unless asked: affine=False is the
    default, so a state_dict from torch.nn has no weight or bias to load.

    The constructor's affine defaults to False; with it off, register weight and bias as
    parameters whose value is None: both attributes exist and the module lists no parameters.
    """
    for cls in CLASSES:
        mine = getattr(kata, cls)(4)
        given = f"{cls}(4)"
        if getattr(mine, "affine", MISSING) is not False:
            fail(f"{given}.affine should be False by default, got {getattr(mine, 'affine', '-')}.")
        names = sorted(n for n, _ in mine.named_parameters())
        if names:
            fail(f"{given} should have no parameters (affine=False by default), got {names}.")
        with_affine = getattr(kata, cls)(4, affine=True)
        expect_no_weight_and_bias(mine, given=given, with_affine=with_affine)


def test_no_running_stats_by_default(kata):
    """running statistics are off by default: no buffers; running_mean and running_var are None

    InstanceNorm1d/2d(C) keeps no running estimates unless asked, track_running_stats=False
    being the default, so it normalizes with each input's own statistics in eval mode too.

    The constructor's track_running_stats defaults to False; with it off, register
    running_mean, running_var and num_batches_tracked as buffers whose value is None.
    """
    for cls in CLASSES:
        mine = getattr(kata, cls)(4)
        given = f"{cls}(4)"
        have = getattr(mine, "track_running_stats", MISSING)
        if have is not False:
            shown = "missing" if have is MISSING else repr(have)
            fail(f"{given}.track_running_stats should be False by default, got {shown}.")
        buffers = sorted(n for n, _ in mine.named_buffers())
        if buffers:
            fail(
                f"{given} should have no buffers (no running statistics by default), got {buffers}."
            )
        expect_no_running_stats(mine, given=given)


def test_parameters(kata):
    """affine=True: weight and bias are parameters of shape (C,), initialised to ones and zeros

    Learnable tensors must be nn.Parameter so that the optimizer, state_dict and .to() see
    them; the constructor arguments stay available as attributes.

    weight: an nn.Parameter of C ones, bias: one of C zeros; num_features, eps, momentum,
    affine and track_running_stats kept as attributes of those names.
    """
    for cls in CLASSES:
        mine, ref = getattr(kata, cls)(5, affine=True), getattr(nn, cls)(5, affine=True)
        expect_same_parameters(mine, ref, given=f"{cls}(5, affine=True)")
        kwargs = {"eps": 1e-3, "momentum": None, "affine": True, "track_running_stats": True}
        mine = getattr(kata, cls)(7, **kwargs)
        expect_arguments_kept(mine, describe_call(cls, 7, **kwargs), {"num_features": 7, **kwargs})


def test_buffers(kata):
    """track_running_stats=True: running_mean, running_var, num_batches_tracked as torch's

    Statistics are state but not learnable: buffers are saved in the state_dict and moved by
    .to(), but never handed to the optimizer.

    Register three buffers: running_mean holding C zeros, running_var holding C ones, and
    num_batches_tracked, a 0-dim long (int64) tensor holding 0.
    """
    for cls in CLASSES:
        kwargs = {"track_running_stats": True}
        mine, ref = getattr(kata, cls)(5, **kwargs), getattr(nn, cls)(5, **kwargs)
        expect_same_buffers(mine, ref, given=describe_call(cls, 5, **kwargs))


def test_state_dict_round_trip(kata):
    """state_dict loads from nn.InstanceNorm1d/2d and into it, both ways, for every setting

    A checkpoint trained with torch.nn must load into your module, and yours into torch.nn's:
    empty by default, weight and bias with affine, the three statistics with tracking.

    Use torch's names, shapes and dtypes: weight, bias, running_mean, running_var (all (C,))
    and num_batches_tracked (a 0-dim long tensor), each only when its flag is on.
    """
    for cls in CLASSES:
        for kwargs in (OFF, AFFINE, TRACK, FULL):
            mine, ref = getattr(kata, cls)(3, **kwargs), getattr(nn, cls)(3, **kwargs)
            expect_state_dict_round_trip(mine, ref, given=describe_call(cls, 3, **kwargs))


def test_output_like_input(kata, device):
    """output has the input's shape, dtype and device, in training and in eval mode

    Normalizing changes values, not the shape or the dtype of the tensor.

    y has x.shape and x.dtype; the statistics are shaped to broadcast back over x.
    """
    for dtype in (torch.float32, torch.float64):
        for cls, x_shape in SHAPES:
            # Without affine: the affine maths has a check of its own, further on.
            for kwargs, mode in ((OFF, "training"), (TRACK, "training"), (TRACK, "eval")):
                mine, _ = paired(kata, cls, 3, stats=True, **kwargs)
                mine = mine.to(device, dtype).train(mode == "training")
                x = torch.randn(x_shape, device=device, dtype=dtype)
                given = f"{describe_call(cls, 3, **kwargs)} in {mode} mode on x {shape_of(x)}"
                expect_like(mine(x.clone()), x, given=given)


def test_biased_variance(kata, device):
    """normalizes with the biased variance of each sample's channel (divide by m)

    The variance used to normalize is the values' own spread, their population variance:
    the unbiased one (divide by m - 1) is only for a running estimate.

    σ²_nc = (1/m) Σ (x − μ_nc)² over the m positions: divide by m, not m − 1.
    """
    # One sample of one channel: whichever dims a mistake reduces over, only m remains.
    x = torch.tensor([[[1.0, -2.0, 0.5, 4.0]]], dtype=torch.float64, device=device)
    mine = kata.InstanceNorm1d(1).to(device, torch.float64)
    given = f"InstanceNorm1d(1) in training mode on x = {x.cpu().tolist()}"
    expect_close(mine(x.clone()), normalized(x), given=given, judge_dtype=False)


def test_eps_inside_sqrt(kata, device):
    """eps is added to the variance, inside the square root

    eps keeps a flat channel from dividing by zero; it belongs to the variance, so a large
    eps shrinks a low-variance channel's output.

    x̂ = (x − μ) / √(σ² + ε), not (x − μ) / (√σ² + ε).
    """
    # One sample of one channel, so that only eps can make a difference.
    for cls, x_shape in (("InstanceNorm1d", (1, 1, 6)), ("InstanceNorm2d", (1, 1, 3, 4))):

        def make(eps, cls=cls):
            return getattr(kata, cls)(1, eps=eps, **OFF).to(device, torch.float64)

        def name(eps, cls=cls):
            return describe_call(cls, 1, eps=eps, **OFF)

        x = torch.randn(x_shape, device=device, dtype=torch.float64) * 0.5 + 1
        given = f"x = 1 + 0.5 * randn {shape_of(x)}, in training mode"
        expect_eps_in_the_root(
            make, x, 0.5, lambda x, eps: normalized(x, eps=eps), name=name, given=given
        )
    # In eval mode, with running statistics: running_var + eps. Where eval does not use the
    # running statistics at all (at an eps too small to show), that is
    # test_eval_uses_running_stats's mistake, and this part has nothing to judge.
    for cls, x_shape in SHAPES:
        x = torch.randn(x_shape, dtype=torch.float64, device=device) * 2 + 1
        for eps in (1e-8, 0.5):
            mine, ref = paired(kata, cls, 3, stats=True, eps=eps, **TRACK)
            mine, ref = mine.to(device, torch.float64).eval(), ref.to(device, torch.float64)
            got = expect_tensor(mine(x.clone())).detach()
            view = (1, 3) + (1,) * (x.dim() - 2)
            mean, var = ref.running_mean.view(view), ref.running_var.view(view)
            expected = (x - mean) / (var + eps).sqrt()
            given = (
                f"{describe_call(cls, 3, eps=eps, **TRACK)} in eval mode, with random running "
                f"statistics, on x {shape_of(x)}"
            )
            if eps < 1e-6 and not values_close(got, expected):
                break  # eval ignores the running statistics: not this check's mistake
            if eps > 1e-6:
                expect_close(got, expected, given=given, judge_dtype=False)


def test_statistics_per_sample_and_channel(kata, device):
    """each sample's channel is normalized with its own mean and variance, over L or H and W

    Instance norm shares no statistic across the batch (that is BatchNorm) nor across the
    channels (that is LayerNorm): x[n, c] is standardized over its own positions alone.

    μ_nc and σ²_nc over l (or h and w) only: m = L (or H·W) values per sample and channel.
    """
    # Which values share a mean and a variance, read off which outputs move when one input
    # does: how they are normalized is other checks' business.
    for cls, x_shape in SHAPES:
        x = torch.randn(x_shape, device=device, dtype=torch.float64)
        mine = getattr(kata, cls)(3, **OFF).to(device, torch.float64)
        given = f"{describe_call(cls, 3, **OFF)} in training mode on x {shape_of(x)}"
        expect_own_statistics(mine, x, given=given)


def test_numerically_stable(kata, device):
    """stable in float32 when a channel has a large mean (no E[x²] − E[x]² shortcut)

    E[x²] − E[x]² subtracts two huge, nearly equal numbers: with a mean of 1000 and a spread
    of 1 they are about a million and differ by one, and float32 keeps about seven digits of
    each, so the variance keeps one or two.

    Centre first, then average the squares: xc = x − μ; σ² = mean(xc²).
    """
    x = 1000 + torch.randn(2, 3, 256, device=device)
    mine = kata.InstanceNorm1d(3).to(device)
    given = f"InstanceNorm1d(3) in training mode on x = 1000 + randn {shape_of(x)}"
    expect_stable_under_shift(mine, x, 1000, given=given)


def test_affine_per_channel(kata, device):
    """affine=True scales channel c by weight[c] and shifts it by bias[c], after normalizing

    weight and bias have one value per channel, the same for every sample and position:
    they broadcast along dim 1.

    y[n, c, ...] = weight[c] · x̂[n, c, ...] + bias[c], with weight and bias viewed as
    (1, C, 1) or (1, C, 1, 1).
    """
    for cls, x_shape in (("InstanceNorm1d", (2, 3, 3)), ("InstanceNorm2d", (2, 3, 3, 3))):
        # Against the layer's own output without affine, scaled and shifted: how it normalizes
        # is other checks' business, what the affine does is this one's.
        mine, ref = paired(kata, cls, 3, **AFFINE)
        plain = getattr(kata, cls)(3, **OFF).to(device, torch.float64)
        mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
        x = torch.randn(x_shape, device=device, dtype=torch.float64) * 2 + 1
        view = (1, 3) + (1,) * (len(x_shape) - 2)
        weight, bias = ref.weight.detach().view(view), ref.bias.detach().view(view)
        expected = expect_tensor(plain(x.clone())).detach() * weight + bias
        given = (
            f"{describe_call(cls, 3, **AFFINE)} with random weight and bias, on x {shape_of(x)}, "
            "against your layer without affine, times weight[c] plus bias[c]"
        )
        expect_close(mine(x.clone()), expected, given=given, judge_dtype=False, equal_nan=False)


def test_eval_without_running_stats(kata, device):
    """with track_running_stats off, eval mode normalizes with the input's own statistics

    With track_running_stats=False (the default) there are no running estimates to fall back
    on, so eval mode computes each sample's statistics just as training does.

    Normalize with the input's statistics whenever the module is training or has no
    running_mean.
    """
    # Against the layer's own output in training mode: how it normalizes is other checks'
    # business, that eval without running statistics does the same is this one's.
    for cls, x_shape in SHAPES:
        mine = getattr(kata, cls)(3, **OFF).to(device, torch.float64)
        x = torch.randn(x_shape, device=device, dtype=torch.float64) * 3 + 2
        in_training = expect_tensor(mine.train()(x.clone())).detach()
        given = (
            f"{describe_call(cls, 3, **OFF)} in eval mode on x {shape_of(x)}, against its own "
            "output in training mode"
        )
        got = mine.eval()(x.clone())
        expect_close(got, in_training, given=given, judge_dtype=False, equal_nan=False)


def test_running_mean_update(kata, device):
    """training updates running_mean with the batch's average of the sample means

    Each sample's channel mean μ_nc is folded in with weight momentum, and the N samples'
    results are averaged: the running estimate is per channel, shared by all samples.

    running_mean = (1 − momentum) · running_mean + momentum · (1/N) Σ_n μ_nc.
    """
    for cls, x_shape in SHAPES:
        mine, (old_mean, _), x = one_step(kata, device, cls, x_shape, momentum=0.3)
        given = (
            f"{cls}(3, track_running_stats=True, momentum=0.3) with running_mean = "
            f"{[round(v, 3) for v in old_mean.tolist()]} after one training step on x "
            f"{shape_of(x)}"
        )
        expected = 0.7 * old_mean + 0.3 * x.mean(spatial(x)).mean(0)
        have = stat(mine, "running_mean", given=given)
        if not values_close(have, expected):
            probe = getattr(kata, cls)(3, **OFF).to(device, torch.float64)
            expect_own_statistics(probe, x, given=given, owner=PER_SAMPLE)
        what = "running_mean (0.7 * old + 0.3 * mean of μ_nc)"
        expect_close(have, expected, given=given, what=what, judge_dtype=False)


def test_running_var_unbiased_average(kata, device):
    """running_var folds in the unbiased variances of the samples, averaged over the batch

    Each sample's channel variance is made unbiased over its m positions (m / (m − 1)), then
    the N of them are averaged; pooling all N·m values (BatchNorm's variance) would add the
    spread between the samples' means.

    running_var = (1 − momentum) · running_var + momentum · (1/N) Σ_n σ²_nc · m / (m − 1).
    """
    for cls, x_shape in (("InstanceNorm1d", (4, 3, 3)), ("InstanceNorm2d", (3, 3, 2, 2))):
        mine, (old_mean, old_var), x = one_step(kata, device, cls, x_shape)
        given = (
            f"{cls}(3, track_running_stats=True) with running_var = "
            f"{[round(v, 3) for v in old_var.tolist()]} after one training step on x "
            f"{shape_of(x)} whose samples' means differ"
        )
        # The weight of the batch as the layer gives it, read off its running_mean: which way
        # momentum weighs is test_running_mean_update's.
        batch = weight_of_batch(mine, old_mean, x.mean(spatial(x)).mean(0), given=given)
        expected = (1 - batch) * old_var + batch * x.var(spatial(x), unbiased=True).mean(0)
        have = stat(mine, "running_var", given=given)
        if not values_close(have, expected):
            probe = getattr(kata, cls)(3, **OFF).to(device, torch.float64)
            expect_own_statistics(probe, x, given=given, owner=PER_SAMPLE)
        what = f"running_var ({1 - batch:g} * old + {batch:g} * mean of the unbiased σ²_nc)"
        expect_close(have, expected, given=given, what=what, judge_dtype=False)


def test_eval_uses_running_stats(kata, device):
    """with running statistics, eval mode normalizes every sample with them

    In eval mode a tracking layer uses running_mean and running_var, the same (C,) values
    for every sample, instead of the input's statistics.

    y = (x − running_mean[c]) / √(running_var[c] + ε) · weight[c] + bias[c].
    """
    # eps = 1e-8, against running_var in [0.5, 3]: where eps goes does not show here (it is
    # test_eps_inside_sqrt's, in eval mode too), which statistics eval uses does.
    for cls, x_shape in SHAPES:
        kwargs = {"eps": 1e-8, **FULL}
        mine, ref = paired(kata, cls, 3, stats=True, **kwargs)
        mine, ref = mine.to(device, torch.float64).eval(), ref.to(device, torch.float64).eval()
        x = torch.randn(x_shape, dtype=torch.float64, device=device) * 2 + 1
        expected = normalized_by_running_stats(x, ref, 1e-8)
        given = (
            f"{describe_call(cls, 3, **kwargs)} in eval mode, with random running "
            f"statistics, on x {shape_of(x)}"
        )
        got = eval_output(mine, x, expected, given=given)
        expect_close(got, expected, given=given, judge_dtype=False)


def test_eval_leaves_running_stats_unchanged(kata, device):
    """eval mode leaves running_mean, running_var and num_batches_tracked unchanged

    Evaluating a model must not change it: the statistics are updated in training only.

    Update the running statistics only when the module is in training mode and
    track_running_stats is True; in eval mode all three stay as they were.
    """
    for cls, x_shape in SHAPES:
        mine, _ = paired(kata, cls, 3, stats=True, **TRACK)
        given = f"{describe_call(cls, 3, **TRACK)} in eval mode"
        expect_eval_leaves_stats(mine, x_shape, device=device, given=given)


def test_unbatched_input(kata, device):
    """an unbatched sample, (C, L) or (C, H, W), is normalized as a batch of one

    torch accepts one sample without its batch dim, and InstanceNorm1d's 2D input is such a
    sample (C, L), not BatchNorm1d's (N, C): its channel dim is 0.

    Add a batch dim of size 1 in front, normalize as usual, then remove that dim again, and
    only that one: a sample's own dims of size 1 stay. The running statistics are updated as
    for a batch of one.
    """
    # Against the layer's own output for x as a batch of one, from the same state: how it
    # normalizes a batch is other checks' business, that one sample is that batch is this
    # one's. Where the batch of one itself raises, that is another check's mistake too.
    cases = [(cls, 3, x_shape) for cls, x_shape in UNBATCHED] + UNBATCHED_SIZE_ONE
    for cls, channels, x_shape in cases:
        for kwargs in (OFF, FULL):
            mine, twin = paired_twins(kata, cls, channels, kwargs, device)
            name = describe_call(cls, channels, **kwargs)
            for mode in ("training", "eval"):
                in_mode(mode, mine, twin)
                x = torch.randn(x_shape, device=device, dtype=torch.float64) * 2 + 1
                given = (
                    f"{name} in {mode} mode on an unbatched x {shape_of(x)}, against your layer "
                    f"on x as a batch of one {shape_of(x.unsqueeze(0))}"
                )
                batch = quietly(lambda twin=twin, x=x: twin(x.unsqueeze(0).clone()))
                if batch is None:
                    break
                got = mine(x.clone())
                expect_close(got, batch[0], given=given, judge_dtype=False, equal_nan=False)
                if kwargs["track_running_stats"] and mode == "training":  # eval: not this one's
                    expect_stats_match(mine, twin, given=given, when="afterwards", count=False)
    # One position per channel, L = 1: eval with running statistics takes it (the input's own
    # statistics would need two positions).
    mine, twin = paired_twins(kata, "InstanceNorm1d", 3, FULL, device)
    mine, twin = mine.eval(), twin.eval()
    x = torch.randn(3, 1, device=device, dtype=torch.float64) * 2 + 1
    name = describe_call("InstanceNorm1d", 3, **FULL)
    given = (
        f"{name} in eval mode on an unbatched x {shape_of(x)}, one position per channel, "
        f"against your layer on x as a batch of one {shape_of(x.unsqueeze(0))}"
    )
    batch = quietly(lambda: twin(x.unsqueeze(0).clone()))
    if batch is not None:
        got = mine(x.clone())
        expect_close(got, batch[0], given=given, judge_dtype=False, equal_nan=False)


def test_input_unmodified(kata, device):
    """the input tensor is left unmodified, its shape and its values, batched or unbatched

    The caller still owns x: compute into new tensors instead of overwriting it.

    Write x − μ into a new tensor; an in-place subtraction (the -= operator, or a method whose
    name ends in an underscore) writes into the caller's x.

    [changed the shape] An unbatched sample is the caller's tensor too: adding the batch dim
    with an in-place method (one whose name ends in an underscore) reshapes it for good.

    [changed the shape] Make the batch of one a new view of x, with the size-1 dim in front,
    and leave x itself (C, L) or (C, H, W); remove the dim from the output only.
    """
    for cls, x_shape in (*SHAPES, *UNBATCHED):
        for kwargs in (OFF, FULL):
            for mode in ("training", "eval"):
                mine, _ = paired(kata, cls, 3, stats=True, **kwargs)
                mine = mine.to(device).train(mode == "training")
                x = torch.randn(x_shape, device=device)
                before = x.clone()
                quietly(lambda mine=mine, x=x: mine(x))  # an error in forward is others' mistake
                given = f"{describe_call(cls, 3, **kwargs)} in {mode} mode on x {shape_of(before)}"
                if x.shape != before.shape:
                    fail(
                        f"{given} changed the shape of its input x in place, to "
                        f"{tuple(x.shape)}; the caller's tensor must stay as it was."
                    )
                if not torch.equal(x, before):
                    fail(
                        f"{given} changed the values of its input x in place; the caller's "
                        "tensor must stay as it was."
                    )


def test_running_stats_no_autograd_history(kata, device):
    """running statistics carry no autograd history, so training and later backwards work

    The running averages are statistics, not part of the graph: otherwise each step's graph
    stays reachable from the buffers, memory grows every step, and a later backward through
    them fails with "Trying to backward through the graph a second time".

    Update them with gradient tracking switched off (the no_grad context), or from statistics
    detached from the graph.
    """
    mine, _ = paired(kata, "InstanceNorm2d", 3, **FULL)
    mine = mine.to(device, torch.float64)
    given = f"{describe_call('InstanceNorm2d', 3, **FULL)} with x.requires_grad=True"
    expect_stats_without_history(mine, (2, 3, 3, 3), device=device, given=given)


def test_from_scratch(kata, device):
    """implemented from tensor operations, not the built-in instance norm

    The exercise is the formula and its contract: F.instance_norm, nn.InstanceNorm1d/2d and
    the other built-in norms (batch, group, layer) are off limits here.

    mean, var, sqrt or rsqrt, view/reshape and in-place mul_/add_ are all you need.
    """
    for cls, x_shape in SHAPES:
        for kwargs in (OFF, FULL):
            mine, _ = paired(kata, cls, 3, **kwargs)
            x = torch.randn(x_shape, device=device)
            expect_from_scratch_in_both_modes(mine.to(device), x, quietly=quietly)


def test_vectorized(kata, device):
    """vectorized: no Python loop over channels or samples

    Reduce over whole dimensions at once, for every sample and channel together, and let
    broadcasting apply the (N, C) statistics.

    One reduction over the spatial dims (2, 3) with keepdim gives every μ_nc at once, shaped
    (N, C, 1, 1) to broadcast back over x.
    """
    for cls, small_shape, large_shape in (
        ("InstanceNorm2d", (2, 2, 3, 3), (16, 64, 8, 8)),
        ("InstanceNorm1d", (2, 2, 3), (32, 64, 16)),
    ):
        small, _ = paired(kata, cls, small_shape[1], **FULL)
        large, _ = paired(kata, cls, large_shape[1], **FULL)
        xs = torch.randn(small_shape, device=device)
        xl = torch.randn(large_shape, device=device)
        given = (
            f"{cls}({small_shape[1]}, ...) vs {cls}({large_shape[1]}, ...) with affine "
            "and running statistics,"
        )
        expect_vectorized_in_both_modes(
            small.to(device),
            large.to(device),
            xs,
            xl,
            given=given,
            run=lambda m, x: quietly(lambda: m(x)),  # an error is others' to say
        )


def test_to_dtype(kata, device):
    """after .to(torch.float64) parameters and running statistics are float64: all registered

    .to() moves only registered tensors, parameters and buffers, not plain tensor attributes:
    those stay behind, in their old dtype and on their old device.

    Create the running statistics as registered buffers, not as plain tensor attributes, so
    that .to() converts them along with the parameters; eps and momentum stay Python floats,
    which .to() leaves alone.
    """
    mine, _ = paired(kata, "InstanceNorm2d", 3, stats=True, **FULL)
    mine = mine.to(device, torch.float64)
    expect_registered_state(
        mine, dtype=torch.float64, given=f"{describe_call('InstanceNorm2d', 3, **FULL)}.to(float64)"
    )


def test_follows_device(kata, device):
    """runs on CUDA in eval and training mode: running statistics move with .to(device)

    Eval mode reads running_mean and running_var: as buffers they move with .to(device), as
    plain tensor attributes they stay on the CPU. Tensors made in forward must be on x's device.

    Register the statistics as buffers, so that .to(device) moves them; any tensor forward
    creates is made on x's device, or derived from x.
    """
    for cls, x_shape in SHAPES:
        for kwargs in (OFF, FULL, TRACK):
            mine, _ = paired(kata, cls, 3, stats=True, **kwargs)
            name = describe_call(cls, 3, **kwargs)
            expect_follows_device_in_both_modes(
                mine, x_shape, device=device, name=name, judge_crashes=False
            )


@pytest.mark.broad
def test_forward_matches_torch(kata, device):
    """forward matches nn.InstanceNorm1d/2d for every setting, shape and mode, float32 and float64

    Every (sample, channel) is normalized with its own statistics (or, in eval with tracking,
    the running ones), then scaled and shifted per channel when affine.

    y = (x − μ) / √(σ² + ε) · weight + bias, μ and σ² over the spatial dims only.
    """
    settings = [OFF, AFFINE, TRACK, FULL]
    cases = [*SHAPES, *UNBATCHED, ("InstanceNorm1d", (1, 3, 2)), ("InstanceNorm2d", (3, 3, 1, 2))]
    for dtype in (torch.float32, torch.float64):
        for eps in (1e-5, 0.1):
            for kwargs in settings:
                for cls, x_shape in cases:
                    call = {"eps": eps, **kwargs} if eps != 1e-5 else kwargs
                    mine, ref = paired(kata, cls, 3, stats=True, **call)
                    mine, ref = mine.to(device, dtype), ref.to(device, dtype)
                    for mode in ("training", "eval"):
                        in_mode(mode, mine, ref)
                        x = torch.randn(x_shape, device=device, dtype=dtype) * 3 + 1
                        given = f"{describe_call(cls, 3, **call)} in {mode} mode on x {shape_of(x)}"
                        expect_close(mine(x.clone()), ref(x).detach(), given=given)


@pytest.mark.broad
def test_gradients_match(kata, device):
    """gradients for the input, weight and bias match torch's, in training and eval mode

    With the input's statistics the mean and variance depend on x, so the gradient flows
    through them too; autograd does it for you if they stay in the graph.

    No .detach(), .data or in-place edits on the path from x to the output.
    """
    for cls, x_shape in SHAPES:
        for kwargs in (OFF, FULL):
            make = partial(paired, kata, cls, 3, stats=True, **kwargs)
            name = describe_call(cls, 3, **kwargs)
            expect_same_grads_in_both_modes(make, x_shape, device=device, name=name)


@pytest.mark.broad
def test_several_steps_then_eval(kata, device):
    """after three training steps the running statistics and the eval output match torch's

    A real training loop: several training-mode batches from a drifting distribution, then
    eval mode on new data. Each step folds its batch into the running averages, and eval
    normalizes with them.

    Per step: running = (1 − m) · running + m · the batch's average of the per-sample
    statistics, with the unbiased variances for running_var.
    """
    for momentum in (0.1, 0.5):
        for cls, x_shape in SHAPES:
            kwargs = {"momentum": momentum, **FULL}
            mine, ref = paired(kata, cls, 3, **kwargs)
            name = describe_call(cls, 3, **kwargs)
            expect_several_steps_then_eval(
                mine, ref, x_shape, device=device, name=name, count=False
            )


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """a float64 input is computed in float64, as torch does, in training and eval mode

    torch computes the statistics in float32 only for float16 and bfloat16 inputs; upcasting
    every input to float32 also rounds a float64 input to float32.

    compute dtype = float32 for float16/bfloat16 inputs, x.dtype otherwise: upcast only those.
    """
    for kwargs in (OFF, FULL):
        mine, _ = paired(kata, "InstanceNorm2d", 3, stats=True, **kwargs)
        mine = mine.to(device, torch.float64)
        x = torch.randn(2, 3, 4, 4, dtype=torch.float64, device=device)
        name = f"{describe_call('InstanceNorm2d', 3, **kwargs)}.to(float64)"
        expect_float64_in_both_modes(mine, x, name=name)


@pytest.mark.parity
def test_momentum_none_freezes_running_stats(kata, device):
    """momentum=None (or 0.0) leaves the running statistics at their initial values, as torch does

    nn.InstanceNorm1d/2d hands F.instance_norm a momentum of 0.0 when momentum is None: the
    running statistics never move, and eval normalizes with mean 0 and variance 1. It is
    not BatchNorm's cumulative average. A momentum of 0.0 given does the same.

    momentum None or 0.0: factor 0, so running = 1 · running + 0 · batch statistic (i.e. no
    update). Only None means torch's special case: a momentum of 0.0 is a value, and stays 0.
    """
    for (cls, x_shape), momentum in itertools.product(SHAPES, (None, 0.0)):
        kwargs = {"momentum": momentum, **FULL}
        mine, ref = paired(kata, cls, 3, **kwargs)
        mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
        name = describe_call(cls, 3, **kwargs)
        for k in range(2):
            x = torch.randn(x_shape, dtype=torch.float64, device=device) * (k + 2) + 3
            given = (
                f"{name}, fresh, after {k + 1} training step{'s' if k else ''} on x {shape_of(x)}"
            )
            expect_close(mine(x.clone()), ref(x).detach(), given=given)
            expect_stats_match(mine, ref, given=given, when="(still 0 and 1)", count=False)
        mine.eval()
        ref.eval()
        x = torch.randn(x_shape, dtype=torch.float64, device=device) * 2 + 3
        given = f"{name} in eval mode after 2 training steps, on x {shape_of(x)}"
        expect_close(mine(x.clone()), ref(x).detach(), given=given)


@pytest.mark.parity
def test_num_batches_tracked_stays_zero(kata, device):
    """num_batches_tracked stays 0: torch's instance norm never counts batches

    The buffer exists so that the state_dict matches torch's (it comes from their shared
    _NormBase), but F.instance_norm never increments it, whatever the momentum.

    Register it as a 0-dim long (int64) tensor holding 0, and never add to it.
    """
    for cls, x_shape in SHAPES:
        for momentum in (0.1, None):
            kwargs = {"momentum": momentum, "track_running_stats": True}
            mine = getattr(kata, cls)(3, **kwargs).to(device)
            given = describe_call(cls, 3, **kwargs)
            for _ in range(3):
                mine(torch.randn(x_shape, device=device))
            count = stat(mine, "num_batches_tracked", given=given)
            if int(count) != 0:
                fail(
                    f"{given}: num_batches_tracked after 3 training steps is {int(count)}, "
                    "expected 0 as torch leaves it."
                )


@pytest.mark.parity
def test_running_stats_updated_in_place(kata, device):
    """a training step updates the running statistics in place: same tensors, layer's dtype

    torch writes the new averages into the buffers it registered. They stay the same tensors,
    so a reference taken before (a state_dict, say) sees the update, and they keep the layer's
    dtype: a float16 layer computes its statistics in float32 but stores them in float16.
    Assigning a new tensor to the attribute loses both.

    Update each buffer with in-place operations under no_grad (multiply and add in place, lerp
    in place, or copy the new values in), so that it stays the tensor it was, in its dtype.
    """
    # Half layers first: there a new tensor also shows as a change of dtype.
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        for cls, x_shape in SHAPES:
            mine = getattr(kata, cls)(3, **TRACK).to(device, dtype)
            x = torch.randn(x_shape, device=device).to(dtype)
            given = (
                f"{describe_call(cls, 3, **TRACK)}.to({dtype_name(dtype)}) after a training "
                f"step on x {shape_of(x)}"
            )
            before = {name: stat(mine, name, given=given) for name in STATS[:2]}
            mine(x)
            for name, old in before.items():
                have = stat(mine, name, given=given)
                if have is not old:
                    now = f", {dtype_name(have.dtype)}" if have.dtype != dtype else ""
                    fail(
                        f"{given}: {name} is a new tensor{now}; torch updates the "
                        f"{dtype_name(dtype)} buffer it registered in place, so that it stays "
                        "the same tensor, in the layer's dtype."
                    )
                if have.dtype != dtype:
                    fail(
                        f"{given}: {name} is {dtype_name(have.dtype)}; torch keeps it in the "
                        f"layer's dtype, {dtype_name(dtype)}."
                    )


@pytest.mark.parity
def test_wrong_rank_raises(kata, device):
    """an input of the wrong rank raises ValueError, as torch does

    InstanceNorm1d takes (C, L) or (N, C, L), InstanceNorm2d (C, H, W) or (N, C, H, W);
    without a check a 4D input to InstanceNorm1d would be normalized over two dims.

    Check the number of dimensions first, InstanceNorm2d accepting 3 or 4 and InstanceNorm1d
    2 or 3, and fail with a ValueError that names the expected ranks and the one given.
    """
    cases = [("InstanceNorm1d", (2, 3, 4, 5)), ("InstanceNorm1d", (3,)),
             ("InstanceNorm2d", (2, 3, 4, 5, 2)), ("InstanceNorm2d", (3, 4))]  # fmt: skip
    for cls, x_shape in cases:
        for training in (True, False):
            layer = getattr(kata, cls)(3).to(device)
            x = torch.randn(x_shape, device=device)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expect_raises_in_mode(layer, x, training=training, name=f"{cls}(3)")


@pytest.mark.parity
def test_single_spatial_element_raises(kata, device):
    """one position per channel raises ValueError when the input's statistics are needed

    The variance of a single value is 0, so normalizing with it would give all zeros. Eval
    with running statistics does not need the input's statistics, and works; so does an
    (N, C, 4, 1) input, whose channels hold four positions each.

    When the input's statistics are needed (training, or no running statistics) and each
    channel holds one position (L = 1, or H·W = 1: the product of the spatial sizes, not the
    last size alone), fail with a ValueError that says more than 1 spatial element is
    expected and gives the input's size.
    """
    cases = [
        ("InstanceNorm1d", (2, 3, 1), {}, True),
        ("InstanceNorm1d", (3, 1), {}, True),
        ("InstanceNorm2d", (2, 3, 1, 1), FULL, True),
        ("InstanceNorm2d", (2, 3, 1, 1), {}, False),
    ]
    for cls, x_shape, kwargs, training in cases:
        layer = getattr(kata, cls)(3, **kwargs).to(device)
        x = torch.randn(x_shape, device=device)
        expect_raises_in_mode(layer, x, training=training, name=describe_call(cls, 3, **kwargs))
    mine, ref = paired(kata, "InstanceNorm2d", 3, stats=True, **FULL)
    mine, ref = mine.to(device).eval(), ref.to(device).eval()
    x = torch.randn(2, 3, 1, 1, device=device)
    given = f"{describe_call('InstanceNorm2d', 3, **FULL)} in eval mode on x {shape_of(x)}"
    try:
        out = mine(x.clone())
    except ValueError as e:
        fail(f"{given} raised ValueError ({e}), but eval mode uses the running statistics.")
    expect_close(out, ref(x).detach(), given=given)
    # A spatial dim of size 1 among others: H·W = 4 positions per channel, which torch
    # normalizes (batched, and one unbatched sample, whose spatial dims start at dim 1).
    for x_shape in ((2, 3, 4, 1), (2, 3, 1, 4), (3, 4, 1)):
        mine, ref = paired(kata, "InstanceNorm2d", 3)
        mine, ref = mine.to(device), ref.to(device)
        x = torch.randn(x_shape, device=device)
        given = f"InstanceNorm2d(3) in training mode on x {shape_of(x)}"
        try:
            out = mine(x.clone())
        except ValueError as e:
            fail(
                f"{given} raised ValueError ({e}), but each channel holds H·W = 4 positions: "
                "torch normalizes it."
            )
        expect_close(out, ref(x), given=given)


@pytest.mark.parity
def test_num_features_mismatch(kata, device):
    """num_features unlike the channel dim: ValueError with affine, a UserWarning without

    With affine=True weight and bias cannot fit, so torch raises; with affine=False (and no
    running statistics) num_features is never used, so torch only warns and normalizes.

    When the channel dim's size differs from num_features, fail with a ValueError if the
    layer is affine; otherwise warn (a UserWarning that the input's size at the channel dim
    does not match num_features) and normalize as usual.
    """
    for cls, x_shape in (*SHAPES, *UNBATCHED):
        x = torch.randn(x_shape, device=device)
        layer = getattr(kata, cls)(4, affine=True).to(device)
        given = f"{cls}(4, affine=True) on x {shape_of(x)} with 3 channels"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expect_raises(ValueError, lambda layer=layer, x=x: layer(x.clone()), given=given)
        given = f"{cls}(4) on x {shape_of(x)} with 3 channels"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = getattr(kata, cls)(4).to(device)(x.clone())
            except Exception as e:
                fail(f"{given} raised {type(e).__name__} ({e}); torch only warns and normalizes.")
        if not any(issubclass(w.category, UserWarning) for w in caught):
            fail(f"{given} gave no UserWarning; torch warns that num_features does not match.")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = getattr(nn, cls)(4).to(device)(x)
        expect_close(out, expected, given=given)


@pytest.mark.parity
def test_no_warning_when_channels_match(kata, device):
    """a channel dim that matches num_features gives no warning, as in torch

    torch warns about num_features only when the channel dim differs from it: a warning on
    every forward would fill a training loop's log and bury the warnings that matter.

    Compare the channel dim's size (dim 1, or dim 0 unbatched) with num_features, and warn only
    when the two differ.
    """
    for cls, x_shape in (*SHAPES, *UNBATCHED):
        for kwargs in ({}, TRACK):
            for mode in ("training", "eval"):
                x = torch.randn(x_shape, device=device)
                given = f"{describe_call(cls, 3, **kwargs)} in {mode} mode on x {shape_of(x)}"
                mine = getattr(kata, cls)(3, **kwargs).to(device).train(mode == "training")
                ref = getattr(nn, cls)(3, **kwargs).to(device).train(mode == "training")
                theirs, ours = warnings_of(ref, x), warnings_of(mine, x.clone())
                if ours and not theirs:
                    fail(
                        f"{given} warned ({ours[0]}), though its 3 channels match num_features; "
                        "torch's layer gives no warning there: it warns only when they differ."
                    )


@pytest.mark.parity
def test_noncontiguous_input(kata, device):
    """a non-contiguous input works: a transposed or cropped x is normalized as torch does

    Inputs often arrive as views: a sequence model's (N, L, C) transposed to (N, C, L), an image
    with its axes swapped, a crop. Their elements are not laid out one after the other, so a
    view that merges or splits their dims fails; torch normalizes them like any other input.

    Reduce over the spatial dims as they are, or flatten them with reshape, which copies when
    it must: a view of x needs a contiguous layout.
    """
    for cls, made, as_input, how in NONCONTIGUOUS:
        for kwargs in (OFF, FULL):
            for mode in ("training", "eval"):
                mine, ref = paired(kata, cls, 3, stats=True, **kwargs)
                mine, ref = mine.to(device), ref.to(device)
                in_mode(mode, mine, ref)
                x = as_input(torch.randn(made, device=device))
                given = (
                    f"{describe_call(cls, 3, **kwargs)} in {mode} mode on x {shape_of(x)}, "
                    f"{how} (non-contiguous)"
                )
                expected = ref(x).detach()  # before yours: x as it was made
                try:
                    out = mine(x)
                except NotImplementedError:
                    raise
                except Exception as e:
                    error = str(e).splitlines()[0] if str(e) else ""
                    fail(f"{given} raised {type(e).__name__} ({error}); torch normalizes it.")
                expect_close(out, expected, given=given)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, device, dtype):
    """half-precision inputs work, in a half layer and in a float32 one (as under autocast)

    Under mixed precision a float32 InstanceNorm receives float16 activations and must hand
    the same dtype on. float16 keeps 11 significant bits and bfloat16 8: on x = 384 + randn a
    channel mean rounded to float16 is off by up to an eighth of the spread, and every x̂ with
    it, so the statistics are computed in float32, as torch's float32 layer does.

    Compute the statistics and x̂ on a float32 copy of x, then cast the result back to x's dtype
    before it leaves forward.

    [only on half-precision inputs] What your layer does for half inputs alone loses it: the
    statistics rounded to the half dtype (on x = 384 + randn a channel mean rounded to float16
    is off by up to an eighth of the spread), or a shortcut such as E[x²] − E[x]², which cancels
    far from zero even in float32.

    [only on half-precision inputs] On a half input, compute μ, then σ² = mean((x − μ)²), and
    x̂ on a float32 copy of x, and cast the result back to x's dtype before it leaves forward.

    [in float32 as well] Far from zero a variance is a small difference of large numbers: on
    x = 384 + randn (the float16 case) the mean of the squares and the square of the mean are
    both about 147 000 and differ by about 1, and float32 resolves numbers that large only to
    about 0.016, so their difference keeps about two significant digits, and x̂ the error.

    [in float32 as well] Centre first, then average the squares: σ² = mean((x − μ)²) over the
    spatial dims, on the float32 copy of x; no difference of two large means is left to cancel.
    """
    x = torch.randn(2, 8, 5, 5, device=device).to(dtype)
    make = partial(paired, kata, "InstanceNorm2d", 8, stats=True, **FULL)
    name = describe_call("InstanceNorm2d", 8, **FULL)
    expect_half_like_float32(make, x, name=name, on_copy=True)
    # Far from zero, in a float32 layer with the initial weight and bias (exact, so that only
    # the statistics show): the float64 formula rounded once, which float32 statistics rounded
    # once meet within an ulp, as nn.InstanceNorm1d/2d does (under 0.35 of the bound, 40 seeds).
    # 2 ulps is the bound; statistics in half precision miss it by 38 times or more in float16,
    # by 4.8 or more in bfloat16 (the least over 40 seeds).
    offset = HALF_OFFSET[dtype]
    for cls, x_shape in (("InstanceNorm1d", (2, 8, 64)), ("InstanceNorm2d", (2, 8, 8, 8))):
        mine, ref = getattr(kata, cls)(8, affine=True), getattr(nn, cls)(8, affine=True)
        place_torch_state(mine, ref, given=f"{cls}(8, affine=True)")
        mine = mine.to(device)
        x = (offset + torch.randn(x_shape, device=device)).to(dtype)
        given = f"{cls}(8, affine=True) in float32 on x = {offset:g} + randn {shape_of(x)}"
        expect_half_within_bound(mine, x, given=given)


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your InstanceNorm2d and nn.InstanceNorm2d on a batch of feature maps."""
    shape = (16, 64, 128, 128) if device.type == "cuda" else (8, 32, 32, 32)
    mine, ref = paired(kata, "InstanceNorm2d", shape[1], affine=True)
    mine, ref = mine.to(device), ref.to(device)
    x = torch.randn(shape, device=device, requires_grad=True)
    given = f"InstanceNorm2d({shape[1]}, affine=True) in training on x {shape_of(x)}"
    return PerfCase.of_layers(given, mine, ref, x, builtin_name="nn.InstanceNorm2d")


# -- the references and probes the checks above use -------------------------------------------


def expect_own_statistics(layer, x, *, given, owner=None):
    """In training mode, changing one value of x (sample 0, channel 1) changes every output of
    that sample's channel, at every position, and nothing else: each (sample, channel) has a
    mean and a variance of its own, over its positions (see influence). With `owner`, a check
    that reads the statistics and finds them otherwise fails for that check."""
    index = (0, 1) + (0,) * (x.dim() - 2)
    # Then with the next position of that channel moved back as much: the mean stays, the
    # variance does not.
    counter = (0, 1) + (0,) * (x.dim() - 3) + (1,)
    for back in (None, counter):
        moved = influence(layer.train(), x, index, given=given, counter=back)
        moved = moved.reshape(*x.shape[:2], -1)
        want = torch.zeros_like(moved)
        want[0, 1] = True
        if not torch.equal(moved, want):
            break
    else:
        return
    rows = [(n, c) for n in range(x.shape[0]) for c in range(x.shape[1]) if moved[n, c].any()]
    where = f"x[{', '.join(map(str, index))}]"
    if back is not None:
        where += (
            f" up and x[{', '.join(map(str, back))}] down as much (the mean unchanged, the "
            "variance not)"
        )
    said = f"{given}: changing {where} changed outputs of (sample, channel) {rows}"
    if moved[0, 1].any() and not moved[0, 1].all():
        said += f", of (0, 1) only {int(moved[0, 1].sum())} of {moved.shape[2]}"
    said += (
        "; expected every output of sample 0's channel 1, whose mean and variance it moves, "
        "and no other."
    )
    (fail if owner is None else lambda m: fail_for(owner, m))(said)


def paired_twins(kata, cls, channels, kwargs, device):
    """Two of the learner's layers holding the same random state (paired's), in float64."""
    mine, ref = paired(kata, cls, channels, stats=True, **kwargs)
    twin = getattr(kata, cls)(channels, **kwargs)
    fresh = getattr(nn, cls)(channels, **kwargs).state_dict()
    place_torch_state(twin, ref, given=describe_call(cls, channels, **kwargs), initial=fresh)
    return mine.to(device, torch.float64), twin.to(device, torch.float64)


def quietly(run):
    """run(), or None where it raises (NotImplementedError aside): a check that judges what
    ran leaves an error in the learner's code to the checks that say what went wrong."""
    try:
        return run()
    except NotImplementedError:
        raise
    except Exception:
        return None


def spatial(x):
    """The dims of x's statistics: every dim after (N, C)."""
    return tuple(range(2, x.dim()))


def normalized(x, eps=1e-5):
    """x normalized by each sample's channel statistics (biased variance), as a reference."""
    mean = x.mean(spatial(x), keepdim=True)
    var = (x - mean).square().mean(spatial(x), keepdim=True)
    return (x - mean) / (var + eps).sqrt()


def warnings_of(layer, x):
    """The warnings layer(x) gives, each as 'Category: message', whatever the filters say."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layer(x)
    return [f"{w.category.__name__}: {w.message}" for w in caught]


def expect_half_within_bound(mine, x, *, given):
    """mine(x), x half and far from zero, within 2 ulps of x's dtype of the float64 formula
    rounded once. A miss says where the precision went: the same values given in float32 show
    whether the layer's float32 arithmetic loses it as well, or only its half-precision path."""
    tol = 2 * torch.finfo(x.dtype).eps
    want = normalized(x.double())
    out = mine(x.clone())
    try:
        expect_close(out, want.to(x.dtype), given=given, rtol=tol, atol=tol)
    except pytest.fail.Exception as e:
        if type(e) is not pytest.fail.Exception or not (
            isinstance(out, torch.Tensor) and out.shape == x.shape and out.dtype == x.dtype
        ):
            raise  # not a wrong value (the grader's own error, or out's shape or dtype)
        in_float32 = mine(x.float()).detach().double()
        off = (in_float32 - want).abs().max().item()
        if torch.allclose(in_float32, want, rtol=tol, atol=tol):
            cause = (
                f"Given the same values in float32, your layer is within the bound (off by up "
                f"to {off:.2g}): it loses the precision only on half-precision inputs."
            )
        else:
            cause = (
                f"Given the same values in float32, your layer is off by up to {off:.2g} too, "
                "beyond the bound: it loses the precision in float32 as well, as E[x²] − E[x]² "
                "does by cancellation far from zero."
            )
        fail(f"{e.msg} {cause}")


def one_step(kata, device, cls, x_shape, **kwargs):
    """The learner's tracking layer, with random running statistics in float64, after one
    training step on x whose samples' channel means differ around 3: (it, (running_mean,
    running_var) before the step, x)."""
    mine, ref = paired(kata, cls, 3, stats=True, track_running_stats=True, **kwargs)
    mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
    before = ref.running_mean.clone(), ref.running_var.clone()
    per_sample = (x_shape[:2]) + (1,) * (len(x_shape) - 2)
    x = torch.randn(x_shape, dtype=torch.float64, device=device)
    x = x * (1 + torch.rand(per_sample, dtype=torch.float64, device=device))
    x = x + 3 + 2 * torch.randn(per_sample, dtype=torch.float64, device=device)
    mine(x.clone())
    return mine, before, x


# -- inputs the checks above use --------------------------------------------------------------

# (class, batched input shape) pairs covering (N, C, L) and (N, C, H, W), three channels.
SHAPES = [("InstanceNorm1d", (4, 3, 6)), ("InstanceNorm2d", (2, 3, 4, 5))]
# One unbatched sample: (C, L) and (C, H, W).
UNBATCHED = [("InstanceNorm1d", (3, 7)), ("InstanceNorm2d", (3, 4, 5))]
# Unbatched samples with a dim of size 1 of their own, which must survive the batch dim's
# removal: (class, C, shape) with one channel, and with one row (still H·W = 4 positions).
UNBATCHED_SIZE_ONE = [("InstanceNorm1d", 1, (1, 5)), ("InstanceNorm2d", 3, (3, 1, 4))]
# Non-contiguous inputs as they arrive in models: (class, the shape made, how that tensor is
# viewed as the input, what the message calls it). A view that merges dims refuses each:
# x.view(N·C, L) the first, x.view(N, C, -1) (and x.view(N·C, -1)) the others.
NONCONTIGUOUS = [
    ("InstanceNorm1d", (4, 6, 3), lambda t: t.transpose(1, 2), "(N, L, C) transposed"),
    ("InstanceNorm2d", (2, 3, 5, 4), lambda t: t.transpose(2, 3), "H and W transposed"),
    ("InstanceNorm2d", (2, 3, 4, 7), lambda t: t[..., :5], "cropped from width 7"),
    ("InstanceNorm2d", (3, 5, 4), lambda t: t.transpose(1, 2), "unbatched, H and W transposed"),
]
