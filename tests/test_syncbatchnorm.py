"""Hidden checks for the SyncBatchNorm kata.

Single-process checks first (torch.nn.SyncBatchNorm's parameters and buffers, BatchNorm's
behaviour without a process group), then the distributed ones: the learner's module runs on four
ranks at once (processes joined by torch.distributed over gloo on 127.0.0.1, see
norm_katas/checks/distributed) and is compared with torch's BatchNorm on the concatenation of
the ranks' batches, computed in float64 here. nn.SyncBatchNorm itself only runs on GPUs, and its
formulas are BatchNorm's over the global batch: the gradients of weight and bias are each rank's
own share (DDP sums them), torch/nn/modules/_functions.py. Torch parity last: float64 computed
in float64, an empty rank, momentum=None, track_running_stats=False. Which dtype a layer
computes in is dtype policy, so the core holds float64 values, and the statistics read off them,
to float32's tolerance: a SyncBatchNorm that computes and communicates in float32 whatever it is
given solves the core.

Each core property in every mode where it applies (without_process_group: one process, where
SyncBatchNorm is BatchNorm; eps=0.5 and a constant channel where eps must show):

    property             one process (train, eval)   ranks, training             ranks, eval
    statistics           without_process_group        global_mean, global_biased_ eval_mode
                                                      variance, variance_includes_
                                                      spread, uneven_batch_sizes
    eps in the sqrt      eps_inside_sqrt              eps_inside_sqrt             eps_inside_sqrt
    running statistics   without_process_group        running_stats_global_and_   eval_mode
                         (+ out of the graph)         identical, momentum_none     (unchanged)
    gradients            - (BatchNorm's kata)         input_gradients, parameter_ (none in eval)
                                                      gradients_are_local
    untracked            without_process_group        track_running_stats_false   track_running_
                                                                                  stats_false
    no torch.distributed without_torch_distributed    -                           -
"""

from __future__ import annotations

import contextlib
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from norm_katas.checks import (
    BUILTIN_NORMS,
    BUILTIN_SYNC_NORMS,
    FROM_SCRATCH,
    MISSING,
    STATS,
    TOLERANCE,
    Belongs,
    PerfCase,
    Suite,
    TimedOut,
    describe_call,
    expect_arguments_kept,
    expect_close,
    expect_float64_arithmetic,
    expect_follows_device_in_both_modes,
    expect_from_scratch_in_both_modes,
    expect_same_buffers,
    expect_same_parameters,
    expect_state_dict_round_trip,
    expect_tensor,
    expect_vectorized_in_both_modes,
    fail,
    fail_for,
    place_state,
    shape_of,
    values_close,
)
from norm_katas.checks.distributed import GlobalBatchNorm, WorldSpec, raised

RANKS = 4
# Process groups made on every start: two disjoint pairs, and three ranks without rank 0.
GROUPS = {"0-1": [0, 1], "2-3": [2, 3], "1-3": [1, 2, 3]}
# Statistics read off a rank's float64 output, that output's distance from a straight line, and
# the known wrong values a result is matched with: float32's bounds, like every float64 value in
# the core (computing float64 in float32 is dtype policy, torch parity); the wrong statistics
# the checks tell apart are off by far more.
READ_RTOL, READ_ATOL = TOLERANCE[torch.float64]
FORBIDDEN = BUILTIN_NORMS | BUILTIN_SYNC_NORMS  # torch's norms and its SyncBatchNorm's parts
# The ranks every distributed check runs on, each with the learner's SyncBatchNorm: started
# once, reused by every check until one leaves them unusable.
WORLD = WorldSpec(
    RANKS,
    "SyncBatchNorm",
    groups=GROUPS,
    forbidden=FORBIDDEN,
    collectives_check="test_every_rank_joins_the_same_collectives",
)
# Scenario(C, xs, training=, grads=, kwargs=, state=, groups=, dtype=, trace=): steps run on the
# ranks at once (xs[k][r]: rank r's input at step k), and the same on the global batch.
Scenario = WORLD.scenario
# Said under the header when --device cuda cannot give every rank its own GPU.
SUITE = Suite(device_note=WORLD.device_note)


# -- one process: torch.nn's parameters, buffers, and BatchNorm without a process group ------


def test_parameters(kata):
    """weight and bias are parameters of (C,) ones and zeros; the arguments and defaults are torch's

    Learnable tensors must be nn.Parameter so that the optimizer, DDP, state_dict and .to() see
    them; the constructor arguments, process_group included, stay available as attributes.

    weight: an nn.Parameter of C ones, bias: one of C zeros, both registered as None when affine
    is off; the process_group argument kept as an attribute of that name, and the others with
    torch's defaults: eps 1e-5, momentum 0.1, affine and track_running_stats on.

    [initial] The scale starts at one and the shift at zero, as torch's, so that an untrained
    layer passes the normalized input through unchanged; training moves them from there.

    [initial] weight₀ = 1 and bias₀ = 0 at every one of the C channels, not random values.
    """
    expect_same_parameters(kata.SyncBatchNorm(5), nn.SyncBatchNorm(5), given="SyncBatchNorm(5)")
    defaults = {"eps": 1e-5, "momentum": 0.1, "affine": True, "track_running_stats": True}
    expect_arguments_kept(kata.SyncBatchNorm(5), "SyncBatchNorm(5)", defaults)  # torch's
    kwargs = {"eps": 1e-3, "momentum": None, "affine": True, "track_running_stats": False}
    want = {"num_features": 7, **kwargs, "process_group": None}
    expect_arguments_kept(
        kata.SyncBatchNorm(7, **kwargs), describe_call("SyncBatchNorm", 7, **kwargs), want
    )
    mine = kata.SyncBatchNorm(4, affine=False)
    if list(mine.parameters()) or any(
        getattr(mine, name, MISSING) is not None for name in ("weight", "bias")
    ):
        fail(
            "SyncBatchNorm(4, affine=False) should have no parameters, and weight = bias = None "
            "(self.register_parameter('weight', None))."
        )


def test_buffers(kata):
    """running_mean, running_var and num_batches_tracked are buffers initialised like torch's

    Statistics are state but not learnable: buffers are saved in the state_dict, moved by
    .to() and broadcast by DDP, but never handed to the optimizer.

    Register running_mean as a buffer of C zeros, running_var as one of C ones and
    num_batches_tracked as a 0-dim long tensor holding 0; all three registered as None when
    track_running_stats is off.
    """
    expect_same_buffers(kata.SyncBatchNorm(5), nn.SyncBatchNorm(5), given="SyncBatchNorm(5)")
    mine = kata.SyncBatchNorm(5, track_running_stats=False)
    given = "SyncBatchNorm(5, track_running_stats=False)"
    for name in STATS:
        if getattr(mine, name, MISSING) is not None:
            fail(f"{given}: {name} should be None (self.register_buffer({name!r}, None)).")
    if list(mine.buffers()):
        fail(f"{given} should have no buffers, got {sorted(dict(mine.named_buffers()))}.")


def test_state_dict_round_trip(kata):
    """state_dict loads from nn.SyncBatchNorm and nn.BatchNorm2d, and into them

    convert_sync_batchnorm turns a model's BatchNorm layers into SyncBatchNorm ones: the
    checkpoints must load both ways, with the same names, shapes and dtypes.

    weight, bias, running_mean, running_var (all (C,)) and num_batches_tracked (a 0-dim long
    tensor), persistent buffers.
    """
    for kwargs in ({}, {"affine": False}, {"track_running_stats": False}):
        for cls in (nn.SyncBatchNorm, nn.BatchNorm2d):
            mine = kata.SyncBatchNorm(3, **kwargs)
            given = f"SyncBatchNorm with nn.{describe_call(cls.__name__, 3, **kwargs)}"
            expect_state_dict_round_trip(mine, cls(3, **kwargs), given=given)


def test_from_scratch(kata, device):
    """implemented from tensor operations and collectives, not torch's batch norm kernels

    The exercise is the statistics and their synchronisation: F.batch_norm, nn.SyncBatchNorm
    and the kernels of torch's own (torch.batch_norm_stats, batch_norm_gather_stats_with_counts,
    batch_norm_elemt, ...) are off limits, in every mode.

    sum, mean, square, rsqrt, cat, view, dist.all_reduce or dist.all_gather are all you need.
    """
    mine = kata.SyncBatchNorm(4).to(device)
    x = torch.randn(6, 4, 3, device=device)
    expect_from_scratch_in_both_modes(mine, x, forbidden=FORBIDDEN, quietly=quietly)
    xs = rank_data((5, 3, 4, 2), 4, 3)
    scenario = Scenario(4, [xs], grads=[grads_like(xs)], trace=True)
    for report in scenario.run_reports(kata, device):
        # Only the built-ins here: whatever else goes wrong on the ranks, later checks say.
        culprit = report.value["culprit"] if report.value else None
        if culprit:
            fail(
                f"{scenario.given}: on rank {report.rank} the synchronised training step calls "
                f"the built-in {culprit}. {FROM_SCRATCH}"
            )


def test_vectorized(kata, device):
    """vectorized: no Python loop over channels or samples

    Reduce over whole dimensions at once, every channel together, and let broadcasting
    apply the (C,) statistics. (A loop over the ranks' gathered statistics is fine.)

    Σx and Σx² per channel are one reduction each over the dims (0, 2, 3); shaped (1, C, 1, 1) the
    statistics broadcast back.
    """
    for small_shape, large_shape in (((2, 2, 3, 3), (16, 64, 8, 8)), ((2, 2, 3), (32, 64, 16))):
        small = kata.SyncBatchNorm(small_shape[1]).to(device)
        large = kata.SyncBatchNorm(large_shape[1]).to(device)
        xs, xl = torch.randn(small_shape, device=device), torch.randn(large_shape, device=device)
        expect_vectorized_in_both_modes(
            small, large, xs, xl, given="SyncBatchNorm", run=lambda bn, x: quietly(lambda: bn(x))
        )


def test_without_process_group_like_batchnorm(kata, device):
    """in one process, outside any process group, it is BatchNorm, in training and eval mode

    The same model must run on one GPU, or in a notebook, where torch.distributed is not
    initialised: then the global batch is the local one. torch's SyncBatchNorm falls back to
    BatchNorm there, for any (N, C, *) input, with or without running statistics.

    Synchronise only when torch.distributed is available and initialised and the group has more
    than one rank; otherwise apply BatchNorm's formulas to the local batch, the running
    statistics updated (if tracked) without autograd recording it.
    """
    advice = (
        "Without a process group (dist.is_initialized() is False) SyncBatchNorm must work as "
        "plain BatchNorm: check before calling any torch.distributed function."
    )
    for kwargs in ({}, {"track_running_stats": False}):
        tracked = not kwargs
        layer = describe_call("SyncBatchNorm", 4, **kwargs)
        for x_shape in ((6, 4), (5, 4, 7), (3, 4, 5, 6), (2, 4, 3, 2, 2)):
            state = {k: v for k, v in random_state(4).items() if tracked or k not in STATS}
            mine, ref = kata.SyncBatchNorm(4, **kwargs), GlobalBatchNorm(4, **kwargs)
            mine = mine.to(device, torch.float64)
            ref = ref.to(device, torch.float64)
            ref.load_state_dict(state)
            placed(mine, state, kwargs, given=layer)
            for k, training in enumerate((True, True, False), 1):
                mine.train(training)
                ref.train(training)
                x = torch.randn(x_shape, dtype=torch.float64, device=device) * (k + 1) + k - 1
                x.requires_grad_(training)
                mode = "training" if training else "eval"
                given = f"{layer} without a process group, {mode} step {k}, x {shape_of(x)}"
                y = call(mine, x, given=given, learner=kata.path, advice=advice)
                expect_close(y.detach(), ref(x).detach(), given=given)
                for name in ("running_mean", "running_var") if tracked else ():
                    have = getattr(mine, name, None)
                    what = f"{name} afterwards"
                    expect_close(
                        have, getattr(ref, name), given=given, what=what, judge_dtype=False
                    )
                    if have.requires_grad or have.grad_fn is not None:
                        fail(
                            f"{given} with x.requires_grad=True: {name} is now part of "
                            "autograd's graph; update the running statistics under "
                            "torch.no_grad(), or from .detach()ed batch statistics."
                        )


def test_without_torch_distributed(kata, device, monkeypatch):
    """a torch build that lacks distributed support works as BatchNorm

    Some builds of torch have no distributed support: there torch.distributed says it is not
    available and has no is_initialized nor get_world_size, and torch's SyncBatchNorm works as
    BatchNorm.

    Ask whether torch.distributed is available before asking whether it is initialised: only
    then may the group's size be read.
    """
    import torch.distributed as dist

    monkeypatch.setattr(dist, "is_available", lambda: False)
    for name in ("is_initialized", "get_world_size", "get_rank"):
        monkeypatch.delattr(dist, name, raising=False)
    mine, ref = kata.SyncBatchNorm(3), GlobalBatchNorm(3)
    given = "SyncBatchNorm(3) in training, where dist.is_available() is False"
    placed(
        mine, torch_state(3), {}, given="SyncBatchNorm(3)"
    )  # the initial weight is not judged here
    mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
    x = torch.randn(5, 3, 4, dtype=torch.float64, device=device)
    y = call(mine, x, given=given, learner=kata.path, advice="Ask dist.is_available() first.")
    expect_close(y, ref(x).detach(), given=given)


def test_follows_device(kata, device):
    """runs on CUDA in training and eval mode: state in buffers, new tensors on x's device

    Eval mode reads the running statistics: as buffers they move with .to(device), as plain
    tensor attributes they stay on the CPU. A tensor made in forward (a count, a cat of
    statistics) must be made on x's device, or torch.cat and the collectives fail on GPUs.

    Register the statistics as buffers; make each new tensor (a count, a cat of statistics) on
    x's device, or from x (the new_tensor and new_full family).
    """
    for x_shape in ((4, 3, 5, 5), (6, 3, 4)):
        for kwargs in ({}, {"affine": False}):
            mine = kata.SyncBatchNorm(3, **kwargs)
            name = describe_call("SyncBatchNorm", 3, **kwargs)
            placed(mine, random_state(3, affine=kwargs.get("affine", True)), kwargs, given=name)
            expect_follows_device_in_both_modes(mine, x_shape, device=device, name=name)


# -- four ranks -------------------------------------------------------------------------------

SHIFTS = [[-3.0, 1.0, 0.5], [-1.0, 2.0, -2.0], [2.0, -1.0, 3.0], [4.0, 0.0, -1.0]]


def test_every_rank_joins_the_same_collectives(kata, device):
    """every rank makes the same collective calls, in the same order: no deadlock

    A collective returns only when every rank of its group has called it. If one rank skips
    it (a branch on the rank, on the size of its batch, on something only rank 0 does), the
    others wait forever and the job hangs without an error. The grader compares the ranks'
    calls before each one runs, and stops them.

    The same code path on every rank in training: the same collectives, in the same order, on
    tensors of the same shape; never a collective that only rank 0, or any one rank, reaches.
    """
    xs = [rank_data((5, 3, 4, 2), 3, 4, means=SHIFTS) for _ in range(3)]
    scenario = Scenario(
        3, xs, training=[True, True, False], grads=[grads_like(xs[0]), grads_like(xs[1]), None],
        state=random_state(3),
    )  # fmt: skip
    scenario.run(kata, device)


def test_communicates_statistics_only(kata, device):
    """only per-channel statistics cross the wire, not the activations

    SyncBatchNorm needs a few numbers per channel from each rank (a count, a sum and a sum of
    squares; or a mean and a variance), whatever the batch size. Sending the activations
    costs as much as the layer's whole input, at every BatchNorm layer of every step.

    all_reduce or all_gather about 2C + 1 values per rank in forward and 2C in backward.
    """
    sent = []
    for rows, length in ((2, 4), (16, 32)):
        xs = rank_data((rows,) * RANKS, 3, length)
        scenario = Scenario(3, [xs], grads=[grads_like(xs)])
        values = scenario.run(kata, device)
        calls = values[0]["steps"][0]["calls"]
        sent.append((scenario.given, sum(c["numel"] for c in calls), calls))
    (_, small, _), (large_given, large, calls) = sent
    if large > 2 * small + 8:
        names = ", ".join(f"{c['name']} of {c['numel']} values" for c in calls)
        fail(
            f"{large_given}: a training step (forward and backward) sent {large} values from "
            f"rank 0 ({names}), but only {small} with x (2, 3, 4): what crosses the wire grows "
            "with the batch, so the activations themselves are sent. Send per-channel "
            "statistics, whose size depends on C only."
        )


def test_global_mean(kata, device):
    """every rank normalizes with the mean of the global batch, all ranks together

    That is the point of SyncBatchNorm: with a few samples per GPU, each GPU's own mean is a
    noisy estimate; the mean over every rank's batch is the one a single big GPU would use.

    Each rank sends its per-channel sum and count; mean = Σ sums / Σ counts over the ranks.
    """
    xs = rank_data((6,) * RANKS, 3, 4, means=SHIFTS)
    scenario = Scenario(3, [xs], state=torch_state(3))
    values = scenario.run(kata, device)
    want, _ = local_stats(torch.cat(xs))
    given = scenario.given
    for r, x in enumerate(xs):
        mean, _ = statistics_read_off(x, values[r], given=given, rank=r)
        local, _ = local_stats(x)
        suspects = [(local, f"rank {r}'s own batch mean: the statistics must come from every "
                     "rank's batch (all-reduce or all-gather them)")]  # fmt: skip
        expect_statistic(mean, want, given=given, rank=r, what="mean", suspects=suspects, xs=xs)


def test_global_biased_variance(kata, device):
    """every rank normalizes with the biased variance of the global batch (divide by N)

    Training normalizes the global batch by its own spread, the biased variance over all N
    values of a channel on all ranks; the unbiased one (N - 1) is for running_var only.

    var = Σ over ranks of Σ (x - mean)² / N, with the global mean and the global count N.
    """
    xs = rank_data((6,) * RANKS, 3, 4, scales=(0.5, 1.0, 2.0, 3.0))
    mu = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64).view(1, 3, 1)
    xs = [x - x.mean((0, 2), keepdim=True) + mu for x in xs]  # the same mean on every rank
    scenario = Scenario(3, [xs], state=torch_state(3))
    values = scenario.run(kata, device)
    everything = torch.cat(xs)
    _, want = local_stats(everything)
    unbiased = everything.var((0, 2), unbiased=True)
    given = f"{scenario.given}, ranks with the same mean but spreads 0.5, 1, 2 and 3"
    for r, x in enumerate(xs):
        _, var = statistics_read_off(x, values[r], given=given, rank=r)
        suspects = [
            (unbiased, "the unbiased variance of the global batch (divide by N - 1): normalize "
             "with the biased one (divide by N); the unbiased one is for running_var"),
            (local_stats(x)[1], f"rank {r}'s own variance: synchronise the variance too"),
            (x.var((0, 2), unbiased=True), f"rank {r}'s own unbiased variance"),
        ]  # fmt: skip
        expect_statistic(var, want, given=given, rank=r, what="variance", suspects=suspects)


def test_variance_includes_spread_between_ranks(kata, device):
    """the variance includes the spread of the rank means around the global mean

    When the ranks' batches have different means, the global variance is more than the
    average of the ranks' variances: each rank's values also lie away from the global mean.

    var = Σ_r [M2_r + n_r (mean_r - mean)²] / N (M2_r: Σ (x - mean_r)² on rank r); or
    Σ x² / N - mean² from all-reduced sums; or Σ (x - mean)² all-reduced after the mean.
    """
    xs = rank_data((6,) * RANKS, 3, 4, means=SHIFTS)
    scenario = Scenario(3, [xs], state=torch_state(3))
    values = scenario.run(kata, device)
    _, want = local_stats(torch.cat(xs))
    averaged = torch.stack([local_stats(x)[1] for x in xs]).mean(0)
    given = scenario.given
    for r, x in enumerate(xs):
        _, var = statistics_read_off(x, values[r], given=given, rank=r)
        suspects = [
            (averaged, "the average of the ranks' variances, which misses the spread of the "
             "rank means around the global mean: add n_r (mean_r - mean)² for each rank"),
        ]  # fmt: skip
        # The global batch's unbiased variance, or the rank's own: not this check's mistakes.
        total = RANKS * x.numel() // x.size(1)
        others = {"test_global_biased_variance": [
            (want * total / (total - 1), "the unbiased variance of the global batch"),
            (local_stats(x)[1], f"rank {r}'s own variance"),
        ]}  # fmt: skip
        expect_not_others(var, others, given=given, rank=r, what="variance")
        expect_statistic(var, want, given=given, rank=r, what="variance", suspects=suspects, xs=xs)


def test_uneven_batch_sizes(kata, device):
    """ranks with batches of different sizes: each counts by its number of values

    The last batch of an epoch, or a sampler that does not pad, gives the ranks batches of
    different sizes. A rank with 2 samples must weigh a quarter of one with 8, so the
    counts must be synchronised along with the sums.

    mean = Σ_r sum_r / Σ_r n_r, not the plain average of the rank means; the same for the
    variance. All-reduce [sums, sums of squares, count], or all-gather (count, mean, M2).
    """
    xs = rank_data((7, 2, 4, 3), 3, 4, means=SHIFTS)
    scenario = Scenario(3, [xs], state=torch_state(3))
    values = scenario.run(kata, device)
    everything = torch.cat(xs)
    want_mean, want_var = local_stats(everything)
    unweighted = torch.stack([local_stats(x)[0] for x in xs]).mean(0)
    around = torch.stack([(x - unweighted.view(1, 3, 1)).square().mean((0, 2)) for x in xs])
    around_global = torch.stack([(x - want_mean.view(1, 3, 1)).square().mean((0, 2)) for x in xs])
    total = everything.numel() // everything.size(1)
    averaged = torch.stack([local_stats(x)[1] for x in xs]).mean(0)
    for r, x in enumerate(xs):
        mean, var = statistics_read_off(x, values[r], given=scenario.given, rank=r)
        # The rank's own mean, or a variance the variance checks name: not this check's.
        others = {"test_global_mean": [(local_stats(x)[0], f"rank {r}'s own batch mean")]}
        expect_not_others(mean, others, given=scenario.given, rank=r, what="mean")
        others = {
            "test_global_biased_variance": [
                (want_var * total / (total - 1), "the unbiased variance of the global batch"),
                (local_stats(x)[1], f"rank {r}'s own variance"),
            ],
            "test_variance_includes_spread_between_ranks": [
                (averaged, "the average of the ranks' variances"),
            ],
        }
        suspects = [
            (
                unweighted,
                "the plain average of the rank means, which ignores how many "
                "values each rank has: sum the values and the counts over the ranks",
            )
        ]
        expect_statistic(mean, want_mean, given=scenario.given, rank=r, what="mean",
                         suspects=suspects)  # fmt: skip
        suspects = [
            (around.mean(0), "the plain average of the ranks' mean squared deviations: weigh "
             "each rank by its count"),
            (around_global.mean(0), "the plain average over the ranks of their mean squared "
             "deviations from the global mean: weigh each rank by its count"),
        ]  # fmt: skip
        expect_not_others(var, others, given=scenario.given, rank=r, what="variance")
        expect_statistic(var, want_var, given=scenario.given, rank=r, what="variance",
                         suspects=suspects)  # fmt: skip


def test_running_stats_global_and_identical(kata, device):
    """the running statistics follow the global batch, unbiased, the same on every rank

    Every rank must hold the same running_mean and running_var (a checkpoint is saved from
    rank 0; eval on any rank must give the same output), and running_var estimates the data's
    variance from all N values of the global batch.

    On every rank: running_mean ← (1 − m) · running_mean + m · mean; running_var likewise
    with var · N / (N − 1), N the global count; num_batches_tracked grows by one.
    """
    sizes = (6, 2, 3, 5)
    xs = [rank_data(sizes, 3, means=SHIFTS), rank_data(sizes, 3)]
    state = random_state(3)
    scenario = Scenario(3, xs, state=state)
    values = scenario.run(kata, device)
    with downstream(scenario, values, own="test_running_stats_global_and_identical"):
        first = torch.cat(xs[0])
        _, var = local_stats(first)
        N = first.size(0)
        old_mean, old_var = state["running_mean"].double(), state["running_var"].double()
        for r in range(RANKS):
            given = f"{scenario.given}: rank {r}"
            for k, (have, want) in enumerate(scenario.steps(values, r), 1):
                when = f"after training step {k}"
                count = have["num_batches_tracked"]
                if count is None or int(count) != int(want["num_batches_tracked"]):
                    fail(f"{given}: num_batches_tracked {when} is {count}, expected "
                         f"{int(want['num_batches_tracked'])}.")  # fmt: skip
                for name in ("running_mean", "running_var"):
                    got = have[name]
                    if k == 1 and got is not None and got.shape == want[name].shape:
                        n = sizes[r]
                        local_mean, local_var = local_stats(xs[0][r])
                        suspects = {
                            "running_mean": [
                                (old_mean, "unchanged: update it on every rank"),
                                (0.9 * old_mean + 0.1 * local_mean, f"rank {r}'s local mean"),
                            ],
                            "running_var": [
                                (old_var, "unchanged: update it on every rank"),
                                (0.9 * old_var + 0.1 * var, "the biased global variance: use "
                                 f"var * N / (N - 1) with the global count N = {N}"),
                                (0.9 * old_var + 0.1 * var * n / (n - 1), "Bessel's correction "
                                 f"with this rank's count n = {n}: use the global count N = {N}"),
                                (0.9 * old_var + 0.1 * local_var * n / (n - 1),
                                 f"rank {r}'s local unbiased variance"),
                            ],
                        }[name]  # fmt: skip
                        for value, why in suspects:
                            if torch.allclose(got.double(), value, READ_RTOL, READ_ATOL):
                                fail(f"{given}: {name} {when} is {_short(got)}, expected "
                                     f"{_short(want[name])}: that is {why}.")  # fmt: skip
                    expect_close(got, want[name].to(got.dtype) if got is not None else want[name],
                                 given=given, what=f"{name} {when}")  # fmt: skip


def expect_eps_in_training(y, want, x, eps, weight, bias, *, given):
    """y, a rank's training output on x (the same batch on every rank), is want, BatchNorm's on
    the global batch, where eps is concerned: channel 0 (constant: variance 0) exactly, the
    others unless their output is x normalized with eps inside the root around one of the
    variances a layer may take (the biased or unbiased one, of the global batch or the rank's
    own): which one is the variance checks' business."""
    if not isinstance(y, torch.Tensor) or y.shape != want.shape:
        expect_close(y, want, given=given)
    expect_close(y[:, 0], want[:, 0], given=given, what="channel 0's output", judge_dtype=False)
    if values_close(y, want):
        return
    rest = slice(1, None)
    unaffine = (y[:, rest].double() - bias[rest].view(1, -1, 1, 1)) / weight[rest].view(1, -1, 1, 1)
    _, var, residual = used_statistics(x[:, rest], unaffine, eps)
    n, total = x[:, 0].numel(), RANKS * x[:, 0].numel()
    biased = x[:, rest].var((0, 2, 3), unbiased=False)
    variances = [biased, biased * n / (n - 1), biased * total / (total - 1)]
    if residual < READ_ATOL and any(values_close(var, v) for v in variances):
        return
    expect_close(y, want, given=given, judge_dtype=False)


def expect_eps_in_eval(evaluated, trained, x, eps, weight, bias, *, given):
    """An eval output on x is x normalized by the running statistics the rank reported after
    its training step, with eps inside the root, where eval uses them at all (that it does is
    test_eval_mode's business: a layer whose eval mean is not running_mean is judged there)."""
    mean, var = trained["running_mean"], trained["running_var"]
    y = evaluated["y"]
    if not isinstance(mean, torch.Tensor) or not isinstance(var, torch.Tensor):
        return  # no running statistics to hold eval to: the buffers' checks say why
    view = (1, -1, 1, 1)
    mean, var = mean.double().view(view), var.double().view(view)
    want = (x - mean) / (var + eps).sqrt() * weight.view(view) + bias.view(view)
    if values_close(y, want):
        return
    if isinstance(y, torch.Tensor) and y.shape == x.shape:
        unaffine = (y.double() - bias.view(view)) / weight.view(view)
        read, _, residual = used_statistics(x[:, 1:], unaffine[:, 1:], eps)
        if residual > READ_ATOL or not values_close(read, mean.view(-1)[1:]):
            return  # eval does not normalize with running_mean: test_eval_mode's mistake
    expect_close(y, want, given=given, what="output (with the running statistics it reported)",
                 judge_dtype=False, equal_nan=False)  # fmt: skip


@contextlib.contextmanager
def downstream(scenario, values, *, own=""):
    """Where a check of what follows from the forward statistics (running statistics,
    gradients, process groups) fails in its body, first ask whether what it builds on was
    wrong already: the forward statistics, the backward collective, the running statistics'
    update. Those are other checks' mistakes, and the failure is theirs (fail_for), told as
    they would tell it; otherwise the check's own failure stands. `own`: the check itself,
    whose mistakes are its own to tell."""
    try:
        yield
    except (Belongs, TimedOut):
        raise
    except pytest.fail.Exception:
        expect_global_forward(scenario, values)
        expect_global_backward(scenario, values, own=own)
        if own != "test_running_stats_global_and_identical":
            expect_running_stats_updated(scenario, values)
        raise


def read_off(scenario, values, r, step=0):
    """(rank r's x, the mean and the variance it normalized x with, read off its output with
    the scenario's weight and bias), or None where they cannot be read: no data, one value
    per channel, an output of another shape, or one that is no straight line per channel."""
    x = scenario.xs[step][r]
    if x is None or values[r] is None or x.numel() // x.size(1) < 2:
        return None
    y = values[r]["steps"][step]["y"]
    if not isinstance(y, torch.Tensor) or y.shape != x.shape:
        return None
    state = scenario.state or {}
    view = (1, -1) + (1,) * (x.dim() - 2)
    weight = state.get("weight", torch.ones(x.size(1))).double().view(view)
    bias = state.get("bias", torch.zeros(x.size(1))).double().view(view)
    eps = scenario.kwargs.get("eps", 1e-5)
    mean, var, residual = used_statistics(x.double(), (y.double() - bias) / weight, eps)
    return None if residual > 1e-3 else (x.double(), mean, var)


def roughly(a, b):
    """A read-off statistic and a known one agree: loose bounds, far beyond float32's
    rounding and far below what the mistakes told apart change."""
    return bool(torch.isclose(a, b, rtol=1e-3, atol=1e-3).all())


def expect_global_forward(scenario, values, *, step=0):
    """Every rank that can be read normalized with its group's global mean and biased
    variance at `step`; where one did not, and its statistic is a mistake another check is
    named for (its own mean, the plain average of the rank means, the unbiased or averaged
    variance), fail for that check."""
    for r in range(RANKS):
        read = read_off(scenario, values, r, step)
        if read is None:
            continue
        x, mean, var = read
        members = [m for m in scenario.members(r) if scenario.xs[step][m] is not None]
        parts = [scenario.xs[step][m].double() for m in members]
        everything = torch.cat(parts)
        want_mean, want_var = local_stats(everything)
        given = f"{scenario.given}: rank {r}"
        # Only a statistic the check named for it tells: any other (the whole world's mean
        # where the rank's group is smaller, say) leaves the failure to the check that met it.
        total = everything.numel() // everything.size(1)
        plain = torch.stack([local_stats(part)[0] for part in parts]).mean(0)
        averaged = torch.stack([local_stats(part)[1] for part in parts]).mean(0)
        suspects = [
            (mean, want_mean, local_stats(x)[0], "test_global_mean", f"rank {r}'s own batch mean"),
            (mean, want_mean, plain, "test_uneven_batch_sizes",
             "the plain average of the rank means"),
            (var, want_var, want_var * total / (total - 1), "test_global_biased_variance",
             "the unbiased variance of the global batch"),
            (var, want_var, local_stats(x)[1], "test_global_biased_variance",
             f"rank {r}'s own variance"),
            (var, want_var, averaged, "test_variance_includes_spread_between_ranks",
             "the average of the ranks' variances"),
        ]  # fmt: skip
        for have, want, value, owner, why in suspects:
            if not roughly(have, want) and roughly(have, value):
                what = "mean" if have is mean else "variance"
                fail_for(owner, f"{given} normalized with {what} {_short(have)} (read off its "
                                f"output), expected {_short(want)}: {why}.")  # fmt: skip


def expect_global_backward(scenario, values, *, step=0, own=""):
    """Where a rank's gradient of x is the one of its own terms only (no collective in
    backward), or its weight and bias gradients are summed over the ranks, fail for the
    check named for it."""
    if scenario.grads[step] is None:
        return
    for r in range(RANKS):
        x, g = scenario.xs[step][r], scenario.grads[step][r]
        if x is None or g is None or values[r] is None:
            continue
        have, want = values[r]["steps"][step], scenario.expected(r)[step]
        given = f"{scenario.given}: rank {r}"
        members = [m for m in scenario.members(r) if scenario.xs[step][m] is not None]
        everything = torch.cat([scenario.xs[step][m].double() for m in members])
        mean, var = local_stats(everything)
        eps = scenario.kwargs.get("eps", 1e-5)
        view = (1, -1) + (1,) * (x.dim() - 2)
        dims = [0, *range(2, x.dim())]
        invstd = (var + eps).rsqrt().view(view)
        weight = (scenario.state or {}).get("weight", torch.ones(x.size(1))).double()
        count = everything.numel() // everything.size(1)
        x_hat = (x.double() - mean.view(view)) * invstd
        dy = g.double() * weight.view(view)
        local = invstd * (dy - dy.sum(dims, keepdim=True) / count
                          - x_hat * (dy * x_hat).sum(dims, keepdim=True) / count)  # fmt: skip
        got = have.get("grad_x")
        if own == "test_input_gradients":
            pass
        elif (
            isinstance(got, torch.Tensor) and got.shape == x.shape and roughly(got.double(), local)
        ):
            fail_for(
                "test_input_gradients",
                f"{given}: the gradient of x is the gradient from this rank's own terms only: "
                "the other ranks' terms need a collective in backward.",
            )
        for name in ("weight", "bias") if own != "test_parameter_gradients_are_local" else ():
            got, total = have.get(f"grad_{name}"), want.get(f"grad_{name}_all")
            summed = (
                isinstance(got, torch.Tensor) and total is not None and got.shape == total.shape
                and roughly(got.double(), total) and not roughly(total, want[f"grad_{name}"])
            )  # fmt: skip
            if summed:
                fail_for("test_parameter_gradients_are_local", f"{given}: {name}.grad is the sum "
                         "over all ranks, where torch leaves it local.")  # fmt: skip


def expect_running_stats_updated(scenario, values, *, step=0):
    """Where a tracking rank left running_mean as it was, or folded in its own batch's mean,
    fail for the check named for the running statistics."""
    state = scenario.state or {}
    if "running_mean" not in state or not scenario.training[step]:
        return
    old = state["running_mean"].double()
    momentum = scenario.kwargs.get("momentum", 0.1) or 0.1
    for r in range(RANKS):
        x = scenario.xs[step][r]
        if x is None or values[r] is None:
            continue
        got = values[r]["steps"][step].get("running_mean")
        if not isinstance(got, torch.Tensor) or got.shape != old.shape:
            continue
        local = (1 - momentum) * old + momentum * local_stats(x.double())[0]
        given = f"{scenario.given}: rank {r}"
        for value, why in ((old, "unchanged: update it on every rank"),
                           (local, f"rank {r}'s local mean folded in")):  # fmt: skip
            if roughly(got.double(), value) and not roughly(value, values_of(scenario, r, step)):
                fail_for(
                    "test_running_stats_global_and_identical",
                    f"{given}: running_mean after the step is {_short(got)}, {why}.",
                )


def values_of(scenario, r, step):
    """What rank r's running_mean should be after `step`."""
    return scenario.expected(r)[step]["running_mean"].double()


def placed(mine, state, kwargs, *, given):
    """torch's state placed in the learner's layer through its attributes (place_state), or a
    failure for the check named for the entry that has nowhere to go."""
    channels = next(v for v in state.values() if v.dim() == 1).numel()
    problem = place_state(mine, state, initial=torch_state(channels, **kwargs))
    if problem is not None:
        name, why = problem
        owner = "test_buffers" if name in STATS else "test_parameters"
        fail_for(owner, f"{given}: nn.SyncBatchNorm's {name} has nowhere to go: {why}.")


def torch_state(C: int, **kwargs) -> dict:
    """A fresh torch layer's state_dict: weight 1, bias 0, running statistics 0 and 1."""
    return {k: v.clone() for k, v in GlobalBatchNorm(C, **kwargs).state_dict().items()}


def _short(t: torch.Tensor) -> str:
    return "[" + ", ".join(f"{v:.5g}" for v in t.double().tolist()) + "]"


def test_input_gradients(kata, device):
    """the input's gradient on every rank is that of BatchNorm on the global batch

    The global mean and variance depend on every rank's x, so the gradient of one rank's x
    has terms from all ranks: backward needs a collective of its own. Without one (a
    dist.all_reduce in forward that autograd cannot see) each rank gets only its own terms.

    grad_x = w / std * (dy - mean(dy) - x_hat * mean(dy * x_hat)), means over the global
    batch: all-reduce Σ dy and Σ dy * x_hat per channel in backward (an autograd.Function),
    or use differentiable collectives (torch.distributed.nn.functional.all_reduce).
    """
    xs = rank_data((5, 3, 4, 2), 3, 4, means=SHIFTS)
    grads = grads_like(xs)
    state = random_state(3)
    scenario = Scenario(3, [xs], grads=[grads], state=state)
    values = scenario.run(kata, device)
    with downstream(scenario, values, own="test_input_gradients"):
        everything = torch.cat(xs)
        mean, var = local_stats(everything)
        invstd = (var + 1e-5).rsqrt().view(1, 3, 1)
        w = state["weight"].double().view(1, 3, 1)
        N = everything.size(0) * everything.size(2)
        for r in range(RANKS):
            given = f"{scenario.given}: rank {r}"
            have, want = values[r]["steps"][0]["grad_x"], scenario.expected(r)[0]["grad_x"]
            if have is None:
                fail(f"{given}: x.grad is None after backward: is the output detached from x?")
            x_hat = (xs[r] - mean.view(1, 3, 1)) * invstd
            g = grads[r] * w
            local_terms = invstd * (
                g
                - g.sum((0, 2), keepdim=True) / N
                - x_hat * (g * x_hat).sum((0, 2), keepdim=True) / N
            )
            for value, why in (
                (local_terms, "the gradient from this rank's own terms only: the other ranks' "
                 "terms need a collective in backward (all-reduce Σ dy and Σ dy·x_hat)"),
                (invstd * g, "the gradient with the mean and variance treated as constants: they "
                 "depend on x, keep them in the graph"),
            ):  # fmt: skip
                if have.shape == value.shape and torch.allclose(
                    have.double(), value, READ_RTOL, READ_ATOL
                ):
                    fail(f"{given}: the gradient of x is {why}.")
            expect_close(have, want, given=given, what="gradient of x")


def test_parameter_gradients_are_local(kata, device):
    """weight.grad and bias.grad are each rank's own share, as torch's (DDP sums them)

    DistributedDataParallel all-reduces every parameter's gradient after backward. torch's
    SyncBatchNorm therefore returns each rank's share of the weight and bias gradients;
    reducing them inside the layer too would count them once per rank.

    grad_weight = Σ over this rank's values of dy * x_hat, grad_bias = Σ dy, with x_hat
    normalized by the global statistics; no collective for them.
    """
    xs = rank_data((5, 3, 4, 2), 3, 4, means=SHIFTS)
    scenario = Scenario(3, [xs], grads=[grads_like(xs)], state=random_state(3))
    values = scenario.run(kata, device)
    with downstream(scenario, values, own="test_parameter_gradients_are_local"):
        for r in range(RANKS):
            given = f"{scenario.given}: rank {r}"
            have, want = values[r]["steps"][0], scenario.expected(r)[0]
            for name in ("weight", "bias"):
                got = have.get(f"grad_{name}")
                if got is None:
                    fail(f"{given}: {name}.grad is None after backward. Is {name} used in forward?")
                total = want[f"grad_{name}_all"]
                if got.shape == total.shape and torch.allclose(
                    got.double(), total, READ_RTOL, READ_ATOL
                ):
                    fail(
                        f"{given}: {name}.grad is the sum over all ranks. torch leaves it local, "
                        "and DDP all-reduces parameter gradients after backward: reduced here too, "
                        "they would count once per rank."
                    )
                expect_close(got, want[f"grad_{name}"], given=given, what=f"gradient of {name}")


def test_rank_with_batch_of_one(kata, device):
    """a rank with a single sample works: the statistics come from the global batch

    BatchNorm refuses one value per channel, whose variance is 0. In SyncBatchNorm a rank
    holding one sample is normal (uneven batches, a tiny last batch): its value joins the
    global batch, which has many.

    No per-rank error for a single value; the rank contributes count 1 and its one value.
    """
    xs = rank_data((5, 1, 3, 1), 3, means=SHIFTS)
    scenario = Scenario(3, [xs], grads=[grads_like(xs)], state=random_state(3))
    advice = (
        "A rank with one sample is fine in SyncBatchNorm: its statistics come from the global "
        f"batch ({sum(x.size(0) for x in xs)} values per channel here)."
    )
    values = scenario.run(kata, device, advice=advice)
    with downstream(scenario, values):
        for r in range(RANKS):
            have, want = values[r]["steps"][0], scenario.expected(r)[0]
            expect_close(have["y"], want["y"], given=f"{scenario.given}: rank {r}", what="output")
            expect_close(have["grad_x"], want["grad_x"], given=f"{scenario.given}: rank {r}",
                         what="gradient of x")  # fmt: skip


def test_process_group(kata, device):
    """process_group: the statistics are those of the group's ranks only, backward too

    process_group splits the ranks into groups that synchronise separately (e.g. 8 GPUs in
    groups of 2, to keep the cost down). Here two pairs run at once; then the pair [0, 1]
    with backward while ranks 2 and 3 do nothing; then three ranks without rank 0.

    Hand the layer's process_group to every collective as its group, in forward and backward,
    and count the ranks of that group (its world size), not those of the default group.
    """
    # Backward only in [0, 1]: torch.distributed.nn.functional.all_gather's backward on gloo
    # scatters from group rank i as if it were global rank i, and fails in the pair [2, 3].
    pairs = ["0-1", "0-1", "2-3", "2-3"]
    means = [[3.0] * 3, [2.0] * 3, [-3.0] * 3, [-1.0] * 3]
    scenarios = [
        Scenario(3, [rank_data((4, 3, 5, 2), 3, 4, means=means)], groups=pairs,
                 state=torch_state(3)),
        Scenario(3, [xs := [*rank_data((4, 3), 3, 4, means=means), None, None]],
                 grads=[grads_like(xs)], groups=["0-1", "0-1", None, None], state=torch_state(3)),
        Scenario(3, [[None, *rank_data((3, 2, 4), 3, 2, means=SHIFTS[1:])]],
                 groups=[None, "1-3", "1-3", "1-3"], state=torch_state(3)),
    ]  # fmt: skip
    for scenario in scenarios:
        values = scenario.run(kata, device)
        with downstream(scenario, values):
            for r in range(RANKS):
                if values[r] is None:
                    continue
                ((have, want),) = scenario.steps(values, r)
                given = f"{scenario.given}: rank {r}"
                expect_calls(have["calls"], given=given, rank=r, group=scenario.members(r))
                expect_close(have["y"], want["y"], given=given, what="output")
                expect_close(have["running_mean"], want["running_mean"], given=given,
                             what="running_mean", judge_dtype=False)  # fmt: skip
                if "grad_x" in want:
                    expect_close(have["grad_x"], want["grad_x"], given=given, what="gradient of x")


def test_eval_mode(kata, device):
    """eval mode normalizes each rank with the running statistics, and communicates nothing

    In eval mode the output must not depend on the batch, nor on the other ranks: the
    running statistics are the same on every rank, so there is nothing to synchronise, and
    ranks may evaluate different numbers of batches.

    In eval mode, y = (x − running_mean) / √(running_var + ε) · w + b, locally, with no
    collective and no update.
    """
    xs = rank_data((5, 3, 2, 4), 3, 4, means=SHIFTS)
    state = random_state(3)
    scenario = Scenario(3, [xs], training=[False], state=state)
    values = scenario.run(kata, device)
    for r in range(RANKS):
        have, want = values[r]["steps"][0], scenario.expected(r)[0]
        given = f"{scenario.given}, in eval mode with random running statistics: rank {r}"
        expect_calls(have["calls"], given=given, rank=r, none=True)
        expect_close(have["y"], want["y"], given=given, what="output")
        for name in STATS:
            if have[name] is None or not torch.equal(have[name], state[name]):
                fail(f"{given}: {name} changed in eval mode; it must stay as it was.")


def test_eps_inside_sqrt(kata, device):
    """eps is added to the variance inside the square root, on one process and on the ranks

    A channel whose values are all equal has variance 0: without eps (default 1e-5) that is
    0 / 0, NaN. With eps=0.5 and a variance near 1, where eps goes shows in the output.

    y = (x - mean) / sqrt(var + eps): the global biased variance in training, running_var in
    eval.
    """
    for kwargs in ({}, {"eps": 0.5}):
        eps = kwargs.get("eps", 1e-5)
        layer = describe_call("SyncBatchNorm", 3, **kwargs)
        mine, ref = kata.SyncBatchNorm(3, **kwargs), GlobalBatchNorm(3, **kwargs)
        placed(mine, torch_state(3), kwargs, given=layer)  # the initial weight is not judged here
        mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
        for training in (True, False):
            mine.train(training)
            ref.train(training)
            if not training:  # eval on torch's running statistics: their update is not judged here
                state = {k: v.detach().cpu().clone() for k, v in ref.state_dict().items()}
                placed(mine, state, kwargs, given=layer)
            x = torch.randn(6, 3, 4, dtype=torch.float64, device=device)
            x[:, 0] = 2.0
            given = f"{layer} without a process group, {'training' if training else 'eval'}"
            given += ", channel 0 constant"
            y = call(mine, x, given=given, learner=kata.path)
            expect_close(y, ref(x), given=given, judge_dtype=False)
        # On the ranks, the same batch on every rank: the global statistics are then each
        # rank's own, so which of them a layer synchronises (other checks' business) does not
        # show, and eval is held to the running statistics the layer itself reports.
        x = rank_data((4,), 3, 5, 2, means=SHIFTS[:1])[0]
        x[:, 0] = 2.0
        xs = [x.clone() for _ in range(RANKS)]
        state = random_state(3)
        scenario = Scenario(3, [xs, xs], training=[True, False], kwargs=kwargs, state=state)
        values = scenario.run(kata, device)
        weight, bias = state["weight"].double(), state["bias"].double()
        for r in range(RANKS):
            (trained, want), (evaluated, _) = scenario.steps(values, r)
            given = f"{scenario.given}, channel 0 constant: rank {r}, training step 1"
            expect_eps_in_training(trained["y"], want["y"], x, eps, weight, bias, given=given)
            given = f"{scenario.given}, channel 0 constant: rank {r}, eval step 2"
            expect_eps_in_eval(evaluated, trained, x, eps, weight, bias, given=given)


@pytest.mark.broad
def test_matches_batchnorm_on_the_global_batch(kata, device):
    """training and eval match BatchNorm on the global batch: outputs, gradients, statistics

    A small training loop on every rank: two training steps with backward, then eval, on
    several shapes, float32 and float64, with and without affine, compared with torch's
    BatchNorm applied to all the ranks' batches at once.

    Training: global statistics, running statistics updated on every rank, gradients through
    the global statistics; eval: the running statistics, locally.
    """
    cases = [
        ((6, 3, 5, 4), (3,), {}, torch.float32, False),
        ((3, 4, 2, 5), (3, 5), {"momentum": 0.5}, torch.float64, True),
        ((2, 3, 1, 2), (2, 3, 3), {"affine": False}, torch.float64, True),
    ]
    for sizes, shape, kwargs, dtype, backward in cases:
        C = shape[0]
        means = [[s[c % 3] for c in range(C)] for s in SHIFTS]
        xs = [rank_data(sizes, *shape, means=means) for _ in range(3)]
        grads = [grads_like(xs[0]), grads_like(xs[1]), None] if backward else None
        state = random_state(C, affine=kwargs.get("affine", True))
        scenario = Scenario(C, xs, training=[True, True, False], grads=grads, kwargs=kwargs,
                            state=state, dtype=dtype)  # fmt: skip
        values = scenario.run(kata, device)
        for r in range(RANKS):
            for k, (have, want) in enumerate(scenario.steps(values, r), 1):
                mode = "eval" if k == 3 else "training"
                given = f"{scenario.given}: rank {r}, {mode} step {k}"
                expect_close(have["y"], want["y"].to(dtype), given=given)
                for name in ("grad_x", "grad_weight", "grad_bias"):
                    if name in want and (name == "grad_x" or kwargs.get("affine", True)):
                        expect_close(have.get(name), want[name].to(dtype), given=given,
                                     what=name.replace("grad_", "gradient of "))  # fmt: skip
                for name in ("running_mean", "running_var"):
                    expect_close(have[name], want[name].to(dtype), given=given, what=name)


# -- torch parity -----------------------------------------------------------------------------


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """float64 inputs are computed in float64 on every rank, as torch does, collectives included

    torch computes in float32 only for float16 and bfloat16 inputs. Casting x to float32, or
    sending the statistics in float32, rounds a float64 batch to float32's 7 significant digits
    on every rank.

    Let x's dtype flow through: statistics, collectives and the output all in x's dtype.
    """
    xs = rank_data((6,) * RANKS, 3, 4, means=SHIFTS)
    sizes = [x.size(0) for x in xs]

    def outputs(everything):
        values = Scenario(3, [list(everything.split(sizes))]).run(kata, device)
        return torch.cat([values[r]["steps"][0]["y"] for r in range(RANKS)])

    given = f"{Scenario(3, [xs]).given}, the ranks' outputs together"
    expect_float64_arithmetic(outputs, torch.cat(xs), given=given)


@pytest.mark.parity
def test_rank_with_empty_batch(kata, device):
    """a rank with an empty batch still joins every collective; the others are unaffected

    With uneven data one rank can get no sample at all. It must still take part in the
    collectives (or the others hang), contributing count 0 and no NaN: torch's SyncBatchNorm
    sends zeros, returns an empty output, and updates its running statistics with the global ones.

    Guard the division: mean = Σx / max(n, 1) on the empty rank (or send sums and counts, and
    divide by the global count); never leave forward before the collectives.
    """
    sizes = (4, 0, 5, 3)
    xs = [rank_data(sizes, 3, 4, means=SHIFTS) for _ in range(2)]
    scenario = Scenario(3, xs, grads=[grads_like(x) for x in xs], state=random_state(3))
    values = scenario.run(kata, device)
    for r in range(RANKS):
        for k, (have, want) in enumerate(scenario.steps(values, r), 1):
            given = f"{scenario.given}: rank {r}, training step {k}"
            expect_close(have["y"], want["y"], given=given)
            expect_close(have["grad_x"], want["grad_x"], given=given, what="gradient of x")
            for name in ("running_mean", "running_var"):
                expect_close(have[name], want[name], given=given, what=name)


@pytest.mark.parity
def test_momentum_none(kata, device):
    """momentum=None: the running statistics are the plain average of the global ones

    With momentum None every batch weighs the same: the factor is 1 / num_batches_tracked,
    read after the increment, on every rank.

    m = 1 / num_batches_tracked when momentum is None, the given momentum otherwise; then the
    usual update.
    """
    sizes = (4, 2, 3, 5)
    xs = [rank_data(sizes, 3, means=SHIFTS) for _ in range(3)]
    scenario = Scenario(3, xs, kwargs={"momentum": None})
    values = scenario.run(kata, device)
    for r in range(RANKS):
        for k, (have, want) in enumerate(scenario.steps(values, r), 1):
            given = f"{scenario.given}: rank {r}, after training step {k}"
            for name in ("running_mean", "running_var"):
                expect_close(have[name], want[name], given=given, what=name)


@pytest.mark.parity
def test_track_running_stats_false(kata, device):
    """track_running_stats=False: synchronised batch statistics in training, local ones in eval

    Without running estimates torch still synchronises in training, but in eval mode it
    normalizes each rank with its own batch's statistics and communicates nothing.

    Synchronise only in training; in eval with no running statistics, BatchNorm's batch
    statistics on the local batch.
    """
    xs = [rank_data((4, 3, 5, 2), 3, 4, means=SHIFTS) for _ in range(2)]
    scenario = Scenario(3, xs, training=[True, False], kwargs={"track_running_stats": False})
    values = scenario.run(kata, device)
    for r in range(RANKS):
        train, evaluation = values[r]["steps"]
        given = f"{scenario.given}: rank {r}"
        expect_close(train["y"], scenario.expected(r)[0]["y"], given=f"{given}, training step")
        given = f"{given}, eval step"
        expect_calls(evaluation["calls"], given=given, rank=r, none=True)
        local = F.batch_norm(xs[1][r], None, None, training=True)
        expect_close(evaluation["y"], local, given=given, what="output (local batch statistics)")


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your SyncBatchNorm on one process (no process group, so no
    collectives), against nn.SyncBatchNorm, which is BatchNorm there too."""
    shape = (64, 256, 56, 56) if device.type == "cuda" else (16, 64, 32, 32)
    mine = kata.SyncBatchNorm(shape[1]).to(device)
    ref = nn.SyncBatchNorm(shape[1]).to(device)
    x = torch.randn(shape, device=device, requires_grad=True)
    given = f"SyncBatchNorm({shape[1]}) in training on one process, x {shape_of(x)}"
    return PerfCase.of_layers(given, mine, ref, x, builtin_name="nn.SyncBatchNorm")


# -- the machinery the checks above use -------------------------------------------------------


def random_state(C: int, *, affine: bool = True, stats: bool = True) -> dict:
    """A state_dict as after some training: random weight, bias and running statistics."""
    ref = GlobalBatchNorm(C, affine=affine)
    with torch.no_grad():
        if affine:
            ref.weight.normal_()
            ref.bias.normal_()
        if stats:
            ref.running_mean.normal_().mul_(2)
            ref.running_var.uniform_(0.5, 3.0)
            ref.num_batches_tracked.fill_(5)
    return {k: v.clone() for k, v in ref.state_dict().items()}


def rank_data(sizes, C, *rest, means=None, scales=None):
    """One random float64 batch per rank, sizes[r] rows of (C, *rest), with means[r] (one per
    channel) and scales[r] if given."""
    xs = []
    for r, n in enumerate(sizes):
        x = torch.randn(n, C, *rest, dtype=torch.float64)
        if scales is not None:
            x = x * scales[r]
        if means is not None:
            x = x + torch.tensor(means[r], dtype=torch.float64).view(1, C, *[1] * len(rest))
        xs.append(x)
    return xs


def grads_like(xs):
    return [None if x is None else torch.randn_like(x) for x in xs]


def call(module, x, *, given, learner, advice=""):
    """module(x) in this process; an exception in the learner's code fails with advice."""
    try:
        return expect_tensor(module(x))
    except NotImplementedError:
        raise
    except Exception as e:
        fail(f"{given}: your code {raised(e, learner)}. {advice}".rstrip())


def quietly(run):
    """run(), stopping at an error in the learner's code (NotImplementedError aside): the
    structural checks judge what ran; the value checks say what went wrong."""
    try:
        return run()
    except NotImplementedError:
        raise
    except Exception:
        return None


def local_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    dims = [0, *range(2, x.dim())]
    return x.mean(dims), x.var(dims, unbiased=False)


def used_statistics(x: torch.Tensor, y: torch.Tensor, eps: float = 1e-5):
    """The mean and variance that turned x into y = (x - mean) / sqrt(var + eps) (weight 1,
    bias 0), read off a straight line fitted per channel; and how far y is from such a line."""
    C = x.size(1)
    xs, ys = x.transpose(0, 1).reshape(C, -1), y.transpose(0, 1).reshape(C, -1).double()
    xm, ym = xs.mean(1, keepdim=True), ys.mean(1, keepdim=True)
    slope = ((xs - xm) * (ys - ym)).sum(1) / (xs - xm).square().sum(1)
    intercept = ym[:, 0] - slope * xm[:, 0]
    residual = (ys - slope[:, None] * xs - intercept[:, None]).abs().max().item()
    return -intercept / slope, 1 / slope.square() - eps, residual


def statistics_read_off(x, value, *, given, rank):
    """The mean and variance rank `rank` normalized x with, read off its first step's output
    (in `value`, what the rank reported), which must be one straight line per channel."""
    y = value["steps"][0]["y"]
    expect_normalized(x, y, given=given, rank=rank)
    mean, var, _ = used_statistics(x, y)
    return mean, var


def expect_normalized(x, y, *, given, rank):
    """The output is one straight-line map of x per channel: (x - mean) / std."""
    if not isinstance(y, torch.Tensor) or y.shape != x.shape:
        shown = tuple(y.shape) if isinstance(y, torch.Tensor) else type(y).__name__
        fail(f"{given}: rank {rank}'s output has shape {shown}, expected {tuple(x.shape)}.")
    *_, residual = used_statistics(x, y)
    if not math.isfinite(residual) or residual > READ_ATOL:
        fail(
            f"{given}: rank {rank}'s output is not (x - mean) / sqrt(var + eps) with one mean "
            "and one variance per channel: the statistics must be shared by every value of a "
            "channel (over N and all the dims after C), and by every rank."
        )


def expect_statistic(have, want, *, given, rank, what, suspects=(), xs=None):
    """One rank's per-channel statistic (read off its output) against the expected one;
    on failure, say which well-known wrong value it matches, if any. xs: every rank's input,
    whose means of the channel named are then said too."""
    close = torch.isclose(have, want, rtol=READ_RTOL, atol=READ_ATOL)
    if close.all():
        return
    c = int((~close).nonzero()[0])
    why = ""
    for value, explanation in suspects:
        if torch.isclose(have, value, rtol=READ_RTOL, atol=READ_ATOL).all():
            why = f" That is {explanation}."
            break
    means = ""
    if xs is not None:
        by_rank = [round(float(x[:, c].mean()), 2) for x in xs]
        means = f" The ranks' means of channel {c} are {by_rank}."
    fail(
        f"{given}: rank {rank} normalized channel {c} with {what} {have[c].item():.6g} (read off "
        f"its output), expected {want[c].item():.6g}.{means}{why}"
    )


def expect_not_others(have, others, *, given, rank, what):
    """Where a statistic read off a rank's output is a mistake another check is named for
    (others: {check: [(value, what it is)]}), fail for that check, in its words."""
    for check, suspects in others.items():
        for value, said in suspects:
            if torch.isclose(have, value, rtol=READ_RTOL, atol=READ_ATOL).all():
                fail_for(check, f"{given}: rank {rank} normalized with {what} {_short(have)} "
                                f"(read off its output): that is {said}.")  # fmt: skip


def expect_calls(report_calls, *, given, rank, none=False, group=None):
    """The collectives of one rank's step: none at all (eval), or all on `group`."""
    if none and report_calls:
        first = report_calls[0]
        fail(
            f"{given}: in eval mode rank {rank} called {first['name']} ({len(report_calls)} "
            "collective(s) in all). Eval needs no communication: torch's SyncBatchNorm "
            "normalizes with the running statistics, the same on every rank already, or, "
            "without them (track_running_stats=False), with each rank's own batch; and ranks "
            "may evaluate different numbers of batches (a collective there would hang)."
        )
    for call_ in report_calls if group is not None else ():
        if list(call_["group"]) != list(group):
            fail(
                f"{given}: rank {rank}'s {call_['name']} in {call_['phase']} went over ranks "
                f"{list(call_['group'])}, not over its process_group's ranks {list(group)}. "
                "Pass group=self.process_group to every collective (None means every rank)."
            )
