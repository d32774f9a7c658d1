"""What the learner's code does while it runs, seen without timing: the built-ins it calls,
how much work it does as the input grows, where its randomness comes from, which dtype it
computes in and which device it creates tensors on."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

import pytest
import torch
from torch import nn

from norm_katas.checks.comparisons import _fmt, expect_tensor, tensors_in
from norm_katas.runtime import fake_cuda, tracing
from norm_katas.runtime.outcomes import fail

# Built-ins a from-scratch normalization must not call: function names and ATen ops, so that
# F.layer_norm, torch.layer_norm, torch.ops.aten.native_layer_norm and group_norm tricks all count.
BUILTIN_NORMS: frozenset[str] = frozenset({
    "layer_norm", "native_layer_norm", "group_norm", "native_group_norm", "instance_norm",
    "batch_norm", "native_batch_norm", "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training", "_batch_norm_impl_index", "cudnn_batch_norm",
    "miopen_batch_norm", "rms_norm", "_fused_rms_norm", "local_response_norm",
})  # fmt: skip
# The distributed building blocks of torch's own SyncBatchNorm, off limits beside the norms.
BUILTIN_SYNC_NORMS: frozenset[str] = frozenset({
    "batch_norm_stats", "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
    "batch_norm_elemt", "batch_norm_backward_reduce", "batch_norm_backward_elemt",
    "batch_norm_update_stats", "native_batch_norm_backward", "batch_norm_backward",
})  # fmt: skip
BUILTIN_NORM_MODULES: tuple[type[nn.Module], ...] = (
    nn.LayerNorm, nn.GroupNorm, nn.modules.batchnorm._NormBase, nn.LocalResponseNorm,
    *((nn.RMSNorm,) if hasattr(nn, "RMSNorm") else ()),
)  # fmt: skip
BUILTIN_DROPOUTS: frozenset[str] = frozenset({
    "dropout", "dropout_", "native_dropout", "feature_dropout", "feature_dropout_",
    "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "dropout1d", "dropout2d", "dropout3d", "fused_dropout", "_fused_dropout",
})  # fmt: skip
BUILTIN_DROPOUT_MODULES: tuple[type[nn.Module], ...] = (nn.modules.dropout._DropoutNd,)


FROM_SCRATCH = (
    "The kata is to write it from tensor operations (mean, var, sqrt, rand, ...), "
    "as you would at a whiteboard."
)


def expect_from_scratch(
    run: Callable[[], Any],
    forbidden: Iterable[str],
    *,
    module: nn.Module | None = None,
    forbidden_modules: tuple[type[nn.Module], ...] = (),
    forbidden_functions: Iterable[Callable[..., Any]] = (),
    advice: str = FROM_SCRATCH,
    who: str = "forward",
) -> Any:
    """run() must not call any built-in named in `forbidden` (a function or ATen op name).
    `who`: what run() runs of the learner's, as the message names it.

    Detected at run time at two levels (what the learner wrote, and what the dispatcher
    ran), so aliases and torch.ops calls are caught; `module` is also searched for
    instances of `forbidden_modules`. `forbidden_functions` are Python functions (torch's
    own helpers written in Python, such as torch.nn.utils.fusion's), caught by their code
    however they are reached. Returns run()'s result.
    """
    if module is not None and forbidden_modules:
        for name, sub in module.named_modules():
            if isinstance(sub, forbidden_modules):
                where = f"self.{name}" if name else "the module itself"
                fail(f"{where} {_builtin_kind(type(sub), forbidden_modules)}. {advice}")
    functions, called = tuple(forbidden_functions), []

    def watched() -> Any:
        result, seen = tracing.python_calls(run, functions)
        called.extend(seen)
        return result

    result, trace = tracing.record(watched if functions else run)
    if called:
        fail(f"{who} calls {called[0]}. {advice}")
    culprit = trace.first_call_of(set(forbidden))
    if culprit is not None:
        fail(f"{who} calls the built-in {culprit}. {advice}")
    return result


def _builtin_kind(cls: type, forbidden: tuple[type[nn.Module], ...]) -> str:
    """'is a built-in torch.nn.X', or, for a class of the learner's, which of torch's classes
    it subclasses: the nearest in its MRO, the one whose code it inherits."""
    nearest = next(c for c in cls.__mro__ if issubclass(c, forbidden) and _is_torchs(c))
    name = f"{nearest.__module__}.{nearest.__qualname__}"
    return f"is a built-in {name}" if nearest is cls else f"subclasses the built-in {name}"


def _is_torchs(cls: type) -> bool:
    return cls.__module__ == "torch" or cls.__module__.startswith("torch.")


def count_ops(run: Callable[[], Any]) -> int:
    """How many ATen operations run() dispatches (deterministic for a given code path)."""
    with torch.no_grad():
        _, trace = tracing.record(run)
    return len(trace.ops)


def count_python_lines(run: Callable[[], Any]) -> int:
    """How many Python lines, calls and loop jumps run() executes in the learner's own code."""
    with torch.no_grad():
        _, count = tracing.count_python_events(run)
    return count


def expect_vectorized(
    run: Callable[..., Any],
    small: torch.Tensor | tuple[Any, ...],
    large: torch.Tensor | tuple[Any, ...],
    *,
    given: str,
) -> None:
    """run(*large) must do no more work than run(*small): the same code on a larger input.

    `small` and `large` are run's arguments (one tensor, or a tuple: a module and its input, x
    with its weight, ...). They must compare like with like: their tensors pair up in order,
    each of large's with the rank of small's and no dimension shorter, and large's first has
    at least 16 times as many elements. A loop over the dimensions themselves (for d in
    range(x.dim()), as torch's own decompositions write) then runs as often on both, and only
    a loop over rows, channels or elements grows. Grow every dimension the layer lets grow,
    and give both calls the same configuration but for sizes (LayerNorm(16) and LayerNorm(128),
    not LayerNorm((4, 4))), so that a loop over any of them shows.

    Work is counted twice, deterministically and without timing: the tensor operations
    dispatched, and the Python lines executed in the learner's code. A Python loop over rows
    or elements makes one of them grow with the input, even a loop that dispatches nothing
    (a mask built element by element with Python's random module); operations over whole
    dimensions keep both constant.
    """
    small_args = small if isinstance(small, tuple) else (small,)
    large_args = large if isinstance(large, tuple) else (large,)
    x_small, x_large = _like_with_like(small_args, large_args)
    given = f"{given} on {_fmt(x_small.shape)} vs {_fmt(x_large.shape)} inputs"
    n_small, n_large = count_ops(lambda: run(*small_args)), count_ops(lambda: run(*large_args))
    if n_large > n_small + 2:  # slack for a size-dependent branch, far below any loop
        fail(
            f"{given}: your code ran {n_small} tensor operations on the small input but "
            f"{n_large} on the large one. A Python loop over rows, channels, features or "
            "elements? "
            "Use operations over whole dimensions (x.mean(dim=..., keepdim=True), ...)."
        )
    lines_small = count_python_lines(lambda: run(*small_args))
    lines_large = count_python_lines(lambda: run(*large_args))
    if lines_large > lines_small + 4:  # a few lines of size-dependent branching, no loop
        fail(
            f"{given}: your code executed {lines_small} Python lines on the small input but "
            f"{lines_large} on the large one: a Python loop over rows, channels, features or "
            "elements (a list comprehension counts), even if it calls no tensor operation per "
            "element. Build the result with tensor operations over whole dimensions "
            "(torch.rand_like(x), x.mean(dim=..., keepdim=True), ...). A loop over the "
            "dimensions themselves is fine: it runs as often on both inputs, which have the "
            "same rank."
        )


def expect_vectorized_rows(
    make: Callable[[int], tuple[nn.Module, nn.Module]], *, device: torch.device, name: str
) -> None:
    """The learner's layer over the last dim, of make(16) on (2, 16) against that of make(128)
    on (64, 128), does the same work (see expect_vectorized). make(d) is a pair as `paired`
    gives it; `name` is the layer's class as messages show it."""
    small, large = (make(d)[0].to(device) for d in (16, 128))
    xs, xl = torch.randn(2, 16, device=device), torch.randn(64, 128, device=device)
    given = f"{name}(16) vs {name}(128)"
    expect_vectorized(lambda layer, x: layer(x), (small, xs), (large, xl), given=given)


def _like_with_like(
    small: tuple[Any, ...], large: tuple[Any, ...]
) -> tuple[torch.Tensor, torch.Tensor]:
    """The first tensors of two argument lists that expect_vectorized may compare (else the
    suite's own error: a probe of another rank would count a loop over dims as a loop)."""
    pairs = [
        (s, g)
        for s, g in zip(small, large, strict=True)
        if isinstance(s, torch.Tensor) or isinstance(g, torch.Tensor)
    ]
    for s, g in pairs:
        if not (isinstance(s, torch.Tensor) and isinstance(g, torch.Tensor)):
            raise TypeError(
                "expect_vectorized: small and large must hold tensors in the same places"
            )
        if s.dim() != g.dim() or any(a > b for a, b in zip(s.shape, g.shape, strict=True)):
            raise ValueError(
                f"expect_vectorized compares like with like: {_fmt(g.shape)} is not "
                f"{_fmt(s.shape)} grown (the same rank, no dimension shorter)"
            )
    if not pairs:
        raise TypeError("expect_vectorized needs the input tensors among run's arguments")
    x_small, x_large = pairs[0]
    if x_large.numel() < 16 * max(x_small.numel(), 1):
        raise ValueError(
            f"expect_vectorized: {_fmt(x_large.shape)} has fewer than 16 times the elements of "
            f"{_fmt(x_small.shape)}, too few for a loop to show"
        )
    return x_small, x_large


def expect_follows_torch_seed(run: Callable[[], torch.Tensor], *, given: str) -> None:
    """run()'s randomness must come from torch's generator: after torch.manual_seed(s) it
    gives the same result every time.

    A mask drawn with Python's random module or numpy ignores torch.manual_seed, so runs cannot
    be reproduced, and it is built on the host and copied to the device on every call.
    """
    results = []
    for _ in range(2):
        torch.manual_seed(1234)
        results.append(expect_tensor(run()).detach().cpu())
    first, second = results
    if first.shape == second.shape and torch.equal(first.nan_to_num(), second.nan_to_num()):
        return
    used = tracing.host_rng_calls(run)
    cause = (
        f" It calls {', '.join(used)}: that generator ignores torch.manual_seed, and its numbers "
        "are made on the host and copied to the device on every call."
    )
    if not used:
        cause = (
            " Python's random module and numpy have generators of their own, which "
            "torch.manual_seed does not seed; a generator made inside forward does not follow it."
        )
    fail(
        f"{given}: two calls after the same torch.manual_seed(1234) gave different results, so "
        f"the randomness does not come from torch's generator.{cause} Draw it with torch "
        "(torch.rand_like(x), torch.bernoulli, ...) on x's device."
    )


def expect_float64_arithmetic(
    run: Callable[[torch.Tensor], Any],
    x: torch.Tensor,
    *,
    given: str,
    nudged: str = "x",
    reference: torch.Tensor | None = None,
) -> None:
    """run(x) on a float64 x must compute in float64, not round to float32 on the way.

    Whatever the formula, a float64 computation answers a change of x by one part in 1e9;
    one that rounds to float32 inside (x.float(), a float32 constant tensor) cannot see it.
    Which dtype a layer computes in is dtype policy: use this in torch-parity checks only.
    `nudged` names x in the message (grad_out, when run's argument is the gradient).
    `reference`, run(x) computed in float64: a statistic rounded through float32 while x stays
    float64 (T5's variance of x.float()) answers every nudge, yet is off by parts in 1e8, where
    float64 in any order of operations stays within 1e-12. Only an output right to float32's
    precision is judged so: one further off is a formula's mistake, another check's.
    """
    first, changed = _answer_to_nudge(run, x)
    if first.dtype != torch.float64:
        fail(f"{given}: the output is {_fmt(first.dtype)}, expected float64 like the input.")
    if changed < 0.5 and not _constant_in(run, x, first):
        fail(
            f"{given}: changing {nudged} by one part in 1e9 left {1 - changed:.0%} of the output "
            "unchanged, so it was computed in float32 (about 7 significant digits), not float64. "
            f"Upcast only float16/bfloat16 inputs ({nudged}.float() also rounds float64), and "
            f"keep tensors you create in {nudged}'s dtype."
        )
    if reference is not None and first.shape == reference.shape:
        have, want = first.detach().double(), reference.detach().double()
        scale = want.abs().max().clamp_min(1e-300)
        off = ((have - want).abs().max() / scale).item()
        if 1e-10 < off < 1e-5:
            fail(
                f"{given}: the output is off from float64's by {off:.1e} of its largest value, "
                "as from a value rounded through float32 on the way (float64 in any order of "
                f"operations stays within 1e-12), though it moves with {nudged}: a statistic or "
                f"a factor computed from {nudged}.float() is rounded so. Upcast only "
                "float16/bfloat16 inputs."
            )


def computes_in_float64(run: Callable[[torch.Tensor], Any], x: torch.Tensor) -> bool:
    """Whether run(x) on a float64 x computes in float64 (see expect_float64_arithmetic)."""
    first, changed = _answer_to_nudge(run, x)
    return first.dtype == torch.float64 and (changed >= 0.5 or _constant_in(run, x, first))


def _constant_in(run: Callable[[torch.Tensor], Any], x: torch.Tensor, first: Any) -> bool:
    """Whether run's output does not move even for a change of x far beyond any rounding (a
    layer whose weight is all 0 outputs 0): then a nudge cannot tell float32 from float64, and
    what is wrong with it is another check's to say."""
    moved = expect_tensor(run(x * 1.5 + 0.25))
    return moved.shape == first.shape and torch.equal(moved.detach(), first.detach())


def _answer_to_nudge(run: Callable[[torch.Tensor], Any], x: torch.Tensor) -> tuple[Any, float]:
    """run(x), and the share of its elements that change when x changes by one part in 1e9."""
    if x.dtype != torch.float64:
        raise ValueError("a float64 arithmetic probe needs a float64 input")
    nudge = x * (1 + 1e-9 * torch.randn(x.shape, dtype=x.dtype, generator=_generator()).to(x))
    first, second = expect_tensor(run(x.clone())), expect_tensor(run(nudge))
    return first, (first.detach() != second.detach()).double().mean().item()


def _generator() -> torch.Generator:
    return torch.Generator().manual_seed(20240)


def expect_follows_device(
    module: nn.Module,
    *inputs: torch.Tensor,
    device: torch.device,
    given: str,
    judge_crashes: bool = True,
) -> None:
    """module(*inputs) must run on an accelerator and return its output there.

    With a real accelerator (`--device cuda`) it runs there. Without one, on simulated
    CUDA: a tensor created on the CPU inside forward (a dropout mask, a running statistic
    kept as a plain attribute instead of a buffer) is caught as a device mismatch. Code
    the simulation cannot run is skipped, never failed. judge_crashes=False: where forward
    raises on the CPU too, its error is another check's mistake and there is nothing to run
    on the device; the check is skipped, saying so.
    """
    if not judge_crashes:
        try:
            module(*(x.clone() for x in inputs))
        except NotImplementedError:
            raise
        except Exception as e:
            pytest.skip(
                f"{given}: forward raises on the CPU too ({type(e).__name__}: {_said(e)}), "
                "another check's mistake: nothing to run on the device"
            )
    if device.type != "cpu":
        module = module.to(device)
        out = expect_tensor(module(*(x.to(device) for x in inputs)))
        if out.device.type != device.type:
            fail(
                f"{given} on {device.type}: the output is on {out.device}, expected {device.type}."
            )
    else:
        try:
            out = expect_tensor(fake_cuda.run(module, *inputs))
        except fake_cuda.DeviceMismatch as e:
            fail(
                f"{given} on (simulated) CUDA: forward mixed devices ({_said(e)}): a tensor it "
                "made or kept is on the CPU while the input and the module are on CUDA."
            )
        except fake_cuda.Inconclusive as e:
            pytest.skip(f"simulated CUDA could not run this code ({e}); run with a GPU to check")
        if out.device.type not in fake_cuda.SIMULATED:
            fail(f"{given} on (simulated) CUDA: the output is on {out.device}, expected cuda.")


def _said(e: Exception) -> str:
    """torch's words, without its closing "!" (the sentence goes on after them)."""
    return str(e).rstrip("!. ")


def expect_function_follows_device(
    run: Callable[..., Any], *inputs: torch.Tensor, device: torch.device, given: str
) -> None:
    """run(*inputs) must compute on the inputs' device: on a real accelerator with --device,
    else on simulated CUDA, where a tensor created on the CPU inside it is a device mismatch."""
    if device.type != "cpu":
        out = run(*(x.to(device) for x in inputs))
        wrong = [t for t in tensors_in(out) if t.device.type != device.type]
        if wrong:
            fail(
                f"{given} on {device.type}: a result is on {wrong[0].device}, "
                f"expected {device.type}."
            )
        return
    try:
        out = fake_cuda.call(run, *inputs)
    except fake_cuda.DeviceMismatch as e:
        fail(
            f"{given} on (simulated) CUDA: mixed devices ({_said(e)}): a tensor it made is on "
            "the CPU while the inputs are on CUDA."
        )
    except fake_cuda.Inconclusive as e:
        pytest.skip(f"simulated CUDA could not run this code ({e}); run with a GPU to check")
    wrong = [t for t in tensors_in(out) if t.device.type not in fake_cuda.SIMULATED]
    if wrong:
        fail(f"{given} on (simulated) CUDA: a result is on {wrong[0].device}, expected cuda.")


def expect_built_on_device(
    run: Callable[..., Any], *modules: nn.Module, device: torch.device, given: str
) -> Any:
    """run(*modules), code that builds from modules (a fold of one layer into another), must
    build on their device: every tensor of what it returns (a module's parameters and buffers)
    on it, and nothing made on the CPU on the way. On a real accelerator (`--device cuda`) with
    copies of the modules there; without one, on simulated CUDA (fake_cuda.build), where a
    tensor made on the CPU and used with theirs is a device mismatch. Code the simulation
    cannot run is skipped, never failed. The modules themselves are left as they were.
    Returns what run returned."""
    if device.type != "cpu":
        built = run(*(copy.deepcopy(m).to(device) for m in modules))
        want, where = (device.type,), device.type
    else:
        try:
            built = fake_cuda.build(run, *modules)
        except fake_cuda.DeviceMismatch as e:
            fail(
                f"{given} on (simulated) CUDA: mixed devices ({_said(e)}): a tensor it made is "
                "on the CPU while the modules are on CUDA. Make new tensors like the modules' "
                "own (torch.zeros_like(bn.running_mean), or device=... from one of them)."
            )
        except fake_cuda.Inconclusive as e:
            pytest.skip(f"simulated CUDA could not run this code ({e}); run with a GPU to check")
        want, where = fake_cuda.SIMULATED, "(simulated) CUDA"
    found = (
        [*built.named_parameters(), *built.named_buffers()]
        if isinstance(built, nn.Module)
        else [(f"result {i}", t) for i, t in enumerate(tensors_in(built))]
    )
    for name, t in found:
        if t.device.type not in want:
            fail(
                f"{given} on {where}: its {name} is on {t.device}, expected the modules' device. "
                "A module built anew (nn.Conv2d(...)) starts on the CPU: build it with "
                "device=... or move it with .to(), or copy the original (copy.deepcopy)."
            )
    return built
