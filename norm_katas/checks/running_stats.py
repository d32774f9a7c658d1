"""The running statistics of a BatchNorm-like layer (BatchNorm, InstanceNorm that tracks them,
SyncBatchNorm): the buffers torch registers, read by name, and the checks that hold whatever
the statistics are taken over. Each kata builds its layers and hands them in; the messages
name what the kata's `given` says.

Such a layer has two modes that take different paths: training normalizes with the batch's
statistics and folds them into the buffers, eval normalizes with the buffers. The checks here
run both, eval first where the buffers show (a plain tensor attribute stays behind in .to())."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

from norm_katas.checks.comparisons import (
    dtype_name,
    expect_close,
    expect_raises,
    expect_tensor,
    shape_of,
    values_close,
)
from norm_katas.checks.execution import (
    BUILTIN_NORM_MODULES,
    BUILTIN_NORMS,
    expect_float64_arithmetic,
    expect_follows_device,
    expect_from_scratch,
    expect_vectorized,
)
from norm_katas.checks.modules import MISSING, expect_same_grads_in_float64
from norm_katas.runtime.outcomes import fail, fail_for

STATS = ("running_mean", "running_var", "num_batches_tracked")
MODES = ("training", "eval")
# A pair of layers built alike, (the learner's, torch's): a fresh one for each call.
PairMaker = Callable[[], tuple[nn.Module, nn.Module]]


def in_mode(mode: str, *modules: nn.Module) -> None:
    """Put each module in `mode`, "training" or "eval"."""
    for module in modules:
        module.train(mode == "training")


# -- the statistics: read, compared, registered or not ----------------------------------------


def stat(module: nn.Module, name: str, *, given: str) -> Any:
    """module.<name> (a running statistic), failing clearly when it does not exist."""
    value = getattr(module, name, MISSING)
    if value is MISSING:
        fail(
            f"{given}: your layer has no attribute {name}. torch's has one; create it in __init__."
        )
    if value is None:
        fail(f"{given}: {name} is None, expected a tensor (track_running_stats=True).")
    return value


def snapshot(module: nn.Module, *, given: str) -> dict[str, torch.Tensor]:
    """Copies of the three running statistics, to compare with later ones."""
    return {name: torch.as_tensor(stat(module, name, given=given)).clone() for name in STATS}


def expect_stats_match(
    mine: nn.Module, ref: nn.Module, *, given: str, when: str, count: bool = True
) -> None:
    """running_mean and running_var of mine equal ref's; with `count`, num_batches_tracked too
    (InstanceNorm never counts, so its checks leave the count to a check of its own)."""
    for name in ("running_mean", "running_var"):
        have = stat(mine, name, given=given)
        # Their values; their dtype is the buffers' check's (a plain attribute .to() left).
        expect_close(
            have, getattr(ref, name), given=given, what=f"{name} {when}", judge_dtype=False
        )
    if not count:
        return
    have = int(stat(mine, "num_batches_tracked", given=given))
    want = int(ref.num_batches_tracked)
    if have != want:
        fail(f"{given}: num_batches_tracked {when} is {have}, expected {want}.")


def weight_of_batch(
    module: nn.Module, old_mean: torch.Tensor, batch_mean: torch.Tensor, *, given: str
) -> float:
    """The weight the module gave the batch in its running_mean after one training step, from
    old_mean (before the step) to its running_mean, with the batch's mean batch_mean: one
    weight for every channel, read off the update; torch's default 0.1 where the update is no
    such blend. A check of another statistic's update holds it to the same weight, so that
    which way momentum weighs is the momentum check's business alone."""
    have = torch.as_tensor(stat(module, "running_mean", given=given)).detach().double()
    weights = (have.to(old_mean.device) - old_mean) / (batch_mean - old_mean)
    if bool(torch.isfinite(weights).all()) and float(weights.max() - weights.min()) < 1e-6:
        return round(float(weights.mean()), 6)
    return 0.1


def expect_same_buffers(mine: nn.Module, ref: nn.Module, *, given: str) -> None:
    """mine registers ref's buffers, by name, each with its dtype, shape and initial value."""
    have, want = dict(mine.named_buffers()), dict(ref.named_buffers())
    if set(have) != set(want):
        fail(
            f"{given} has buffers {sorted(have)}, expected {sorted(want)}. "
            "Create them with self.register_buffer(name, tensor)."
        )
    for name, t in want.items():
        if have[name].dtype != t.dtype or have[name].shape != t.shape:
            fail(
                f"{given}: buffer {name} is {str(have[name].dtype).removeprefix('torch.')} "
                f"of shape {tuple(have[name].shape)}, expected "
                f"{str(t.dtype).removeprefix('torch.')} of shape {tuple(t.shape)}."
            )
        expect_close(have[name], t, given=given, what=f"initial {name}", rtol=0, atol=0)


def expect_no_running_stats(module: nn.Module, *, given: str) -> None:
    """running_mean, running_var and num_batches_tracked exist and are None (not tracked)."""
    for name in STATS:
        value = getattr(module, name, MISSING)
        if value is not None:
            shown = "missing" if value is MISSING else "a tensor"
            fail(f"{given}: {name} should be None, got {shown}.")


def normalized_by_running_stats(x: torch.Tensor, ref: nn.Module, eps: float) -> torch.Tensor:
    """What eval mode gives: x normalized by ref's running statistics, then its affine, per
    channel (dim 1)."""
    view = (1, -1) + (1,) * (x.dim() - 2)
    expected = (x - ref.running_mean.view(view)) / (ref.running_var.view(view) + eps).sqrt()
    return expected * ref.weight.detach().view(view) + ref.bias.detach().view(view)


# -- checks of the statistics -----------------------------------------------------------------


def expect_eval_leaves_stats(
    mine: nn.Module, x_shape: tuple[int, ...], *, device: torch.device, given: str
) -> None:
    """Two eval-mode forwards leave all three statistics as they were, to the bit."""
    mine = mine.to(device).eval()
    before = snapshot(mine, given=given)
    for _ in range(2):
        mine(torch.randn(x_shape, device=device) * 3 + 2)
    for name, want in before.items():
        have = torch.as_tensor(stat(mine, name, given=given))
        expect_close(have, want, given=given, what=f"{name} after two forwards", rtol=0, atol=0)


def expect_stats_without_history(
    mine: nn.Module, x_shape: tuple[int, ...], *, device: torch.device, given: str
) -> None:
    """Two training steps (each with a backward) leave no autograd history in the statistics,
    and two backwards from eval-mode outputs after them work."""
    for k in range(1, 3):
        x = torch.randn(x_shape, dtype=torch.float64, device=device, requires_grad=True)
        before = x.detach().clone()
        out = mine(x)
        for name in ("running_mean", "running_var"):
            t = stat(mine, name, given=given)
            if t.requires_grad or t.grad_fn is not None:
                fail(
                    f"{given}: after training step {k}, {name} has requires_grad={t.requires_grad} "
                    f"and grad_fn={type(t.grad_fn).__name__ if t.grad_fn else None}; it should "
                    "carry no autograd history."
                )
        try:
            out.square().sum().backward()
        except RuntimeError as e:
            said = f"{given}: backward after training step {k} failed: {str(e).splitlines()[0]}"
            if not torch.equal(x.detach(), before):
                # Autograd kept x to differentiate through it, and forward overwrote it.
                fail_for(
                    "test_input_unmodified",
                    f"{said}. Forward changed its input x in place, which backward needed.",
                )
            fail(said)
    mine.eval()
    for k in range(1, 3):
        x = torch.randn(x_shape, dtype=torch.float64, device=device, requires_grad=True)
        try:
            mine(x).square().sum().backward()
        except RuntimeError as e:
            fail(
                f"{given}: after two training steps, backward number {k} from an eval-mode "
                f"output failed: {str(e).splitlines()[0]}"
            )


def expect_several_steps_then_eval(
    mine: nn.Module,
    ref: nn.Module,
    x_shape: tuple[int, ...],
    *,
    device: torch.device,
    name: str,
    count: bool = True,
) -> None:
    """Three training steps on a drifting input, then eval on new data: each output, and the
    statistics after the steps, equal ref's. `name` is the layer's constructor call; `count`
    as in expect_stats_match. mine gets a copy of x (and runs first), so that a layer that
    writes into its input changes nothing it is compared with."""
    mine, ref = mine.to(device), ref.to(device)

    def run(x: torch.Tensor) -> Any:
        return mine(x.clone())

    for k in range(3):
        x = torch.randn(x_shape, device=device) * (k + 1) + 2 * k - 1
        given = f"{name} at training step {k + 1} on x {shape_of(x)}"
        expect_close(run(x), ref(x).detach(), given=given)
    expect_stats_match(mine, ref, given=name, when="after 3 training steps", count=count)
    mine.eval()
    ref.eval()
    x = torch.randn(x_shape, device=device) * 2 + 1
    given = f"{name} in eval mode after 3 training steps, on x {shape_of(x)}"
    expect_close(run(x), ref(x).detach(), given=given)


# -- checks in training and in eval mode ------------------------------------------------------


def expect_follows_device_in_both_modes(
    module: nn.Module,
    x_shape: tuple[int, ...],
    *,
    device: torch.device,
    name: str,
    judge_crashes: bool = True,
) -> None:
    """module runs on the device in eval mode, then in training mode, on a random x of x_shape
    made on the CPU (see expect_follows_device, judge_crashes too)."""
    x = torch.randn(x_shape)
    skipped = []
    # eval first: it reads the running statistics, where a plain attribute shows up.
    for mode in ("eval", "training"):
        in_mode(mode, module)
        try:
            expect_follows_device(
                module,
                x,
                device=device,
                given=f"{name} in {mode} mode",
                judge_crashes=judge_crashes,
            )
        except pytest.skip.Exception as e:  # the other mode still runs
            skipped.append(str(e))
    if skipped:
        pytest.skip("; ".join(skipped))


def expect_from_scratch_in_both_modes(
    module: nn.Module,
    x: torch.Tensor,
    *,
    forbidden: frozenset[str] = BUILTIN_NORMS,
    quietly: Callable[[Callable[[], Any]], Any] | None = None,
) -> None:
    """A training step, then an eval forward, call no built-in norm (nor one of `forbidden`).
    `quietly` wraps the two, for a kata whose error in the learner's code is another check's."""

    def run() -> Any:
        module.train()
        module(x)
        module.eval()
        return module(x)

    target = run if quietly is None else (lambda: quietly(run))
    expect_from_scratch(target, forbidden, module=module, forbidden_modules=BUILTIN_NORM_MODULES)


def expect_vectorized_in_both_modes(
    small: nn.Module,
    large: nn.Module,
    xs: torch.Tensor,
    xl: torch.Tensor,
    *,
    given: str,
    run: Callable[[nn.Module, torch.Tensor], Any] = lambda m, x: m(x),
) -> None:
    """large on xl does no more work than small on xs, in training and in eval mode. `given`
    names the two layers; the mode is said after it."""
    for mode in MODES:
        in_mode(mode, small, large)
        expect_vectorized(run, (small, xs), (large, xl), given=f"{given} in {mode} mode")


def expect_same_grads_in_both_modes(
    make: PairMaker, x_shape: tuple[int, ...], *, device: torch.device, name: str
) -> None:
    """In each mode, a fresh pair from make() gives the same gradients of x, weight and bias
    (see expect_same_grads_in_float64)."""
    for mode in MODES:
        mine, ref = make()
        in_mode(mode, mine, ref)
        expect_same_grads_in_float64(
            mine, ref, x_shape, device=device, given=f"{name} in {mode} mode"
        )


def expect_float64_in_both_modes(mine: nn.Module, x: torch.Tensor, *, name: str) -> None:
    """mine, float64 already, computes a float64 x in float64 in training and in eval mode."""
    for mode in MODES:
        in_mode(mode, mine)
        expect_float64_arithmetic(mine, x, given=f"{name} in {mode} mode on x {shape_of(x)}")


def expect_raises_in_mode(layer: nn.Module, x: torch.Tensor, *, training: bool, name: str) -> None:
    """layer(x) raises ValueError in training mode (or in eval mode, training=False)."""
    layer.train(training)
    mode = "training" if training else "eval"
    expect_raises(ValueError, lambda: layer(x), given=f"{name} in {mode} mode on x {shape_of(x)}")


def expect_half_like_float32(
    make: PairMaker, x: torch.Tensor, *, name: str, on_copy: bool = False
) -> None:
    """A half x (float16 or bfloat16) gives torch's float32 result, rounded to x's dtype, in a
    float32 layer (as under autocast) and in one of x's dtype, in both modes; `on_copy` as in
    expect_several_steps_then_eval."""
    # A few roundings in the input dtype: float16 has 11 significant bits, bfloat16 only 8
    # (correct implementations measured at up to 3e-3 and 2.4e-2 of |expected| + 1).
    tol = 2e-2 if x.dtype == torch.float16 else 5e-2
    for layer in ("float32", dtype_name(x.dtype)):
        mine, ref = make()
        mine, ref = mine.to(x.device), ref.to(x.device)
        if layer != "float32":
            mine = mine.to(x.dtype)
        for mode in MODES:
            in_mode(mode, mine, ref)
            expected = ref(x.float()).detach().to(x.dtype)
            given = f"{name} in {layer}, {mode} mode, on x {shape_of(x)}"
            expect_close(
                mine(x.clone() if on_copy else x), expected, given=given, rtol=tol, atol=tol
            )


def eval_output(
    mine: nn.Module, x: torch.Tensor, expected: torch.Tensor, *, given: str
) -> torch.Tensor:
    """mine(x) in eval mode; where it is not `expected` and the call changed a running
    statistic first, that is test_eval_leaves_running_stats_unchanged's mistake: the layer
    did normalize with its running statistics, after updating them."""
    before = {name: b.detach().clone() for name, b in mine.named_buffers()}
    got = expect_tensor(mine(x.clone()))
    if got.shape == x.shape and not values_close(got, expected):
        changed = [
            name
            for name, b in mine.named_buffers()
            if name in before
            and not (b.shape == before[name].shape and torch.equal(b, before[name]))
        ]
        if changed:
            fail_for(
                "test_eval_leaves_running_stats_unchanged",
                f"{given}: the call changed {', '.join(changed)} before normalizing with them: "
                "eval mode leaves the running statistics as they are, updated in training only.",
            )
    return got
