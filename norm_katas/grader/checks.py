"""Helpers for writing checks: the only part of `grader` a kata author needs.

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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NoReturn

import pytest
import torch
from torch import nn

from norm_katas.grader import fake_cuda, tracing
from norm_katas.grader.limits import TimedOut
from norm_katas.grader.perf import PerfCase  # noqa: F401  (for suites: what --perf times)

# (rtol, atol) per dtype for forward outputs on the CPU. Two correct formulas differ by a few
# ulps; the mistakes the checks hunt for are orders of magnitude larger. float64 gets float32's
# bounds: which dtype a layer computes a float64 input in is dtype policy (LLaMA's RMSNorm
# computes in float32 whatever it is given), torch parity, and expect_float64_arithmetic checks
# it without any tolerance. A value check must not fail such a layer for its rounding.
TOLERANCE: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-5, 1e-5),
    torch.float32: (1e-5, 1e-5),
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
}
# Where another device lets correct code differ by more, and why.
DEVICE_TOLERANCE: dict[str, dict[torch.dtype, tuple[float, float]]] = {
    # CUDA accumulates float32 reductions in float32, in a tree order, where the CPU kernels
    # accumulate in double: two correct float32 formulas then differ by up to ~log2(n) ulps
    # more. float64 follows float32 (a float64 input may be computed in float32, see above);
    # half keeps the CPU's bounds, which already exceed what order changes.
    "cuda": {torch.float32: (2e-5, 2e-5), torch.float64: (2e-5, 2e-5)},
    # Metal computes rsqrt and reductions with fast-math approximations; no float64 there.
    "mps": {torch.float32: (1e-4, 1e-4), torch.float16: (2e-3, 2e-3)},
}


def tolerance(dtype: torch.dtype, device: torch.device | str = "cpu") -> tuple[float, float]:
    """(rtol, atol) for comparing values of `dtype` computed on `device`."""
    kind = torch.device(device).type
    return DEVICE_TOLERANCE.get(kind, {}).get(dtype, TOLERANCE.get(dtype, (0.0, 0.0)))


# Built-ins a from-scratch normalization must not call: function names and ATen ops, so that
# F.layer_norm, torch.layer_norm, torch.ops.aten.native_layer_norm and group_norm tricks all count.
BUILTIN_NORMS: frozenset[str] = frozenset({
    "layer_norm", "native_layer_norm", "group_norm", "native_group_norm", "instance_norm",
    "batch_norm", "native_batch_norm", "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training", "_batch_norm_impl_index", "cudnn_batch_norm",
    "miopen_batch_norm", "rms_norm", "_fused_rms_norm", "local_response_norm",
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


def fail(message: str) -> NoReturn:
    """Fail the check with a message written for the learner (no traceback shown)."""
    pytest.fail(message, pytrace=False)


def expect_through_function(cls: Any, name: str, run: Callable[[], Any], *, caller: str) -> None:
    """cls must be a torch.autograd.Function, and run() (the learner's wrapper, `caller`) must
    return the output of cls.apply, so that the learner's backward computes the gradient."""
    if not (isinstance(cls, type) and issubclass(cls, torch.autograd.Function)):
        fail(f"{name} should be a subclass of torch.autograd.Function.")
    y = expect_tensor(run(), caller)
    node = type(y.grad_fn).__name__ if y.grad_fn is not None else "no grad_fn"
    if node != f"{cls.__name__}Backward":
        fail(
            f"{caller}(x, weight, bias) produced an output whose grad_fn is {node}, not "
            f"{cls.__name__}Backward: it must return {name}.apply(x, weight, bias, eps), so "
            "that your backward computes the gradient."
        )


class CannotGrade(Exception):
    """This environment cannot grade the kata (a package missing or broken): the grader's
    failure, reported with exit code 3 and this message, never a failed check."""


def cannot_grade(message: str) -> NoReturn:
    raise CannotGrade(message)


class Hung(TimedOut):
    """A check that stopped the learner's code because it never finished (a rank in an
    endless loop): it counts as a timeout, so that the run stops after a few instead of
    waiting out every remaining check."""


def fail_hung(message: str) -> NoReturn:
    raise Hung(message)


class Belongs(pytest.fail.Exception):
    """A failure of the property another check is named for, met first by this one (a suite
    that oversees every call, say): the report ranks it as that check's, so that the headline
    names the mistake rather than whichever check happened to run into it."""

    check: str = ""  # the test function named for the mistake


def fail_for(check: str, message: str) -> NoReturn:
    """Fail this check with `message`, a mistake that the check function `check` is named for."""
    error = Belongs(message, pytrace=False)
    error.check = check
    raise error


def shape_of(x: torch.Tensor) -> str:
    """'(4, 8) float32', the way inputs are described in messages."""
    return f"({', '.join(map(str, x.shape))}) {str(x.dtype).removeprefix('torch.')}"


def describe_call(name: str, *args: Any, **kwargs: Any) -> str:
    """'BatchNorm2d(3, momentum=None)': how a constructor call is shown in messages."""
    shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{name}({', '.join(shown)})"


def load_torch_state(mine: nn.Module, ref: nn.Module, *, given: str, advice: str = "") -> None:
    """Load torch.nn's state_dict into the learner's module (strict), failing clearly."""
    try:
        mine.load_state_dict(ref.state_dict())
    except Exception as e:
        theirs = type(ref).__name__
        fail(f"{given}: could not load nn.{theirs}'s state_dict into yours: {e}. {advice}".rstrip())


def expect_tensor(out: Any, what: str = "forward") -> torch.Tensor:
    """The value must be a tensor: catches a forgotten `return` or a returned tuple."""
    if out is None:
        fail(f"{what} returned None instead of a tensor. Did you forget `return`?")
    if not isinstance(out, torch.Tensor):
        fail(f"{what} returned a {type(out).__name__}, expected a torch.Tensor.")
    return out


def expect_like(out: Any, x: torch.Tensor, *, given: str, what: str = "output") -> torch.Tensor:
    """The output must have the input's shape, dtype and device."""
    out = expect_tensor(out)
    for attr in ("shape", "dtype", "device"):
        want, got = getattr(x, attr), getattr(out, attr)
        if want != got:
            fail(f"{given}: {what} {attr} should be {_fmt(want)} like the input, got {_fmt(got)}.")
    return out


def expect_close(
    got: Any,
    expected: torch.Tensor,
    *,
    given: str,
    what: str = "output",
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    """got must match expected (shape, dtype, device, then values) within TOLERANCE.

    `given` names the setup ("LayerNorm(8) on x (4, 8) float32"); `what` names the value.
    On failure the message shows the first element out of tolerance and the largest error.
    """
    got = expect_tensor(got, what)
    if got.shape != expected.shape:
        fail(f"{given}: {what} has shape {_fmt(got.shape)}, expected {_fmt(expected.shape)}.")
    if got.dtype != expected.dtype:
        fail(f"{given}: {what} has dtype {_fmt(got.dtype)}, expected {_fmt(expected.dtype)}.")
    if got.device != expected.device:
        fail(f"{given}: {what} is on {got.device}, expected {expected.device}.")
    default_rtol, default_atol = tolerance(expected.dtype, expected.device)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    g, e = got.detach().double().cpu(), expected.detach().double().cpu()
    bad = ~torch.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return
    first = tuple(int(i) for i in bad.nonzero()[0])
    diff = (g - e).abs().nan_to_num(nan=float("inf"))
    worst = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
    nan_note = " It contains NaN." if g.isnan().any() and not e.isnan().any() else ""
    fail(
        f"{given}: {what} differs from the expected value at {list(first)}: "
        f"expected {e[first].item():.6g}, got {g[first].item():.6g}. "
        f"{int(bad.sum())} of {bad.numel()} elements are off; the largest difference is "
        f"{diff[worst].item():.3g} at {list(worst)} (rtol={rtol:g}, atol={atol:g}).{nan_note}"
    )


def expect_grads_close(
    got: dict[str, torch.Tensor | None],
    expected: dict[str, torch.Tensor | None],
    *,
    given: str,
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    """Compare gradients by name ("input", "weight", ...); a missing gradient fails clearly."""
    for name, want in expected.items():
        have = got.get(name)
        if want is not None and have is None:
            fail(f"{given}: the gradient of {name} is None. Is it used in forward, with autograd?")
        if want is not None:
            expect_close(have, want, given=given, what=f"gradient of {name}", rtol=rtol, atol=atol)


# An offset whose spacing in each half dtype is a quarter of randn's spread: a mean of such
# values rounded to the dtype is off by up to an eighth of the spread; in float32, by 1e-7 of it.
HALF_OFFSET: dict[torch.dtype, float] = {torch.float16: 384.0, torch.bfloat16: 48.0}


def expect_rounded_once(
    y: Any,
    grads: dict[str, torch.Tensor | None],
    want_y: torch.Tensor,
    want_grads: dict[str, torch.Tensor],
    *,
    dtype: torch.dtype,
    given: str,
) -> None:
    """Half-precision results computed in float32 and rounded once to `dtype`: within 2 ulps of
    the float64 values (want_y, want_grads) rounded once.

    float32 arithmetic rounded once lands within an ulp of them: correct files stay under 0.6 of
    the bound (40 seeds, several shapes), half-precision arithmetic misses it 5 to 600 times.
    """
    tol = 2 * torch.finfo(dtype).eps
    expect_close(y, want_y.to(dtype), given=given, rtol=tol, atol=tol)
    want = {name: g.to(dtype) for name, g in want_grads.items()}
    expect_grads_close(grads, want, given=given, rtol=tol, atol=tol)


def expect_raises(
    errors: type[BaseException] | tuple[type[BaseException], ...],
    run: Callable[[], Any],
    *,
    given: str,
) -> BaseException:
    """run() must raise one of `errors` (NotImplementedError still reads as unfinished)."""
    errors = errors if isinstance(errors, tuple) else (errors,)
    names = " or ".join(e.__name__ for e in errors)
    try:
        run()
    except errors as e:
        return e
    except NotImplementedError:
        raise
    except Exception as e:
        fail(f"{given} should raise {names}, but raised {type(e).__name__}: {e}")
    fail(f"{given} should raise {names}, but returned normally.")


def expect_state_dict_round_trip(mine: nn.Module, ref: nn.Module, *, given: str) -> None:
    """mine loads ref's state_dict (strict) and ref loads mine's: same names, shapes, dtypes.

    ref's entries are randomised first, so a load that silently skips an entry shows up.
    """
    with torch.no_grad():
        for t in ref.state_dict().values():
            t.normal_() if t.is_floating_point() else t.fill_(7)
    want, have = ref.state_dict(), mine.state_dict()
    if set(want) != set(have):
        fail(f"{given}: your state_dict has keys {sorted(have)}, torch.nn's has {sorted(want)}.")
    for name, t in want.items():
        if have[name].shape != t.shape or have[name].dtype != t.dtype:
            fail(
                f"{given}: state_dict entry {name} is {_fmt(have[name].dtype)} "
                f"{_fmt(have[name].shape)}, torch.nn's is {_fmt(t.dtype)} {_fmt(t.shape)}."
            )
    try:
        mine.load_state_dict(want)
    except Exception as e:
        fail(f"{given}: loading torch.nn's state_dict into yours failed: {e}")
    for name, t in mine.state_dict().items():
        expect_close(
            t, want[name], given=given, what=f"{name} after load_state_dict", rtol=0, atol=0
        )
    try:
        ref.load_state_dict(mine.state_dict())
    except Exception as e:
        fail(f"{given}: loading your state_dict into torch.nn's failed: {e}")


def expect_from_scratch(
    run: Callable[[], Any],
    forbidden: Iterable[str],
    *,
    module: nn.Module | None = None,
    forbidden_modules: tuple[type[nn.Module], ...] = (),
    advice: str = FROM_SCRATCH,
) -> Any:
    """run() must not call any built-in named in `forbidden` (a function or ATen op name).

    Detected at run time at two levels (what the learner wrote, and what the dispatcher
    ran), so aliases and torch.ops calls are caught; `module` is also searched for
    instances of `forbidden_modules`. Returns run()'s result.
    """
    if module is not None and forbidden_modules:
        for name, sub in module.named_modules():
            if isinstance(sub, forbidden_modules):
                where = f"self.{name}" if name else "the module itself"
                builtin = next(c for c in forbidden_modules if isinstance(sub, c))
                fail(f"{where} is a built-in {builtin.__module__}.{builtin.__name__}. {advice}")
    result, trace = tracing.record(run)
    culprit = trace.first_call_of(set(forbidden))
    if culprit is not None:
        fail(f"forward calls the built-in {culprit}. {advice}")
    return result


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
            f"{n_large} on the large one. A Python loop over rows or elements? "
            "Use operations over whole dimensions (x.mean(dim=..., keepdim=True), ...)."
        )
    lines_small = count_python_lines(lambda: run(*small_args))
    lines_large = count_python_lines(lambda: run(*large_args))
    if lines_large > lines_small + 4:  # a few lines of size-dependent branching, no loop
        fail(
            f"{given}: your code executed {lines_small} Python lines on the small input but "
            f"{lines_large} on the large one: a Python loop over rows or elements (a list "
            "comprehension counts), even if it calls no tensor operation per element. Build "
            "the result with tensor operations over whole dimensions (torch.rand_like(x), "
            "x.mean(dim=..., keepdim=True), ...). A loop over the dimensions themselves is "
            "fine: it runs as often on both inputs, which have the same rank."
        )


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


def expect_registered_state(module: nn.Module, *, dtype: torch.dtype, given: str) -> None:
    """After module.to(dtype), every floating tensor it holds must have that dtype.

    A tensor kept as a plain attribute (self.w = torch.ones(...)) is not moved by .to();
    only parameters and buffers are.
    """
    for prefix, sub in module.named_modules():
        for name, value in vars(sub).items():
            if (
                isinstance(value, torch.Tensor)
                and value.is_floating_point()
                and value.dtype != dtype
            ):
                attr = f"self.{prefix + '.' if prefix else ''}{name}"
                fail(
                    f"{given}: {attr} is a plain tensor attribute, so .to({_fmt(dtype)}) left it "
                    f"{_fmt(value.dtype)}. Make it an nn.Parameter or register_buffer() it."
                )
    for name, t in module.state_dict().items():
        if t.is_floating_point() and t.dtype != dtype:
            fail(f"{given}: after .to({_fmt(dtype)}), {name} is still {_fmt(t.dtype)}.")


def expect_float64_arithmetic(
    run: Callable[[torch.Tensor], Any], x: torch.Tensor, *, given: str
) -> None:
    """run(x) on a float64 x must compute in float64, not round to float32 on the way.

    Whatever the formula, a float64 computation answers a change of x by one part in 1e9;
    one that rounds to float32 inside (x.float(), a float32 constant tensor) cannot see it.
    Which dtype a layer computes in is dtype policy: use this in torch-parity checks only.
    """
    first, changed = _answer_to_nudge(run, x)
    if first.dtype != torch.float64:
        fail(f"{given}: the output is {_fmt(first.dtype)}, expected float64 like the input.")
    if changed < 0.5:
        fail(
            f"{given}: changing x by one part in 1e9 left {1 - changed:.0%} of the output "
            "unchanged, so it was computed in float32 (about 7 significant digits), not float64. "
            "Upcast only float16/bfloat16 inputs (x.float() also rounds float64), and keep "
            "tensors you create in x's dtype."
        )


def computes_in_float64(run: Callable[[torch.Tensor], Any], x: torch.Tensor) -> bool:
    """Whether run(x) on a float64 x computes in float64 (see expect_float64_arithmetic)."""
    first, changed = _answer_to_nudge(run, x)
    return first.dtype == torch.float64 and changed >= 0.5


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
    module: nn.Module, *inputs: torch.Tensor, device: torch.device, given: str
) -> None:
    """module(*inputs) must run on an accelerator and return its output there.

    With a real accelerator (`--device cuda`) it runs there. Without one, on simulated
    CUDA: a tensor created on the CPU inside forward (a dropout mask, a running statistic
    kept as a plain attribute instead of a buffer) is caught as a device mismatch. Code
    the simulation cannot run is skipped, never failed.
    """
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
                f"{given} on (simulated) CUDA: forward mixed devices: {e}. Create new tensors "
                "on the input's device (torch.rand_like(x), device=x.device), and keep state "
                "in parameters or buffers (register_buffer) so .to(device) moves it."
            )
        except fake_cuda.Inconclusive as e:
            pytest.skip(f"simulated CUDA could not run this code ({e}); run with a GPU to check")
        if out.device.type not in fake_cuda.SIMULATED:
            fail(f"{given} on (simulated) CUDA: the output is on {out.device}, expected cuda.")


def _fmt(value: object) -> str:
    if isinstance(value, torch.Size):
        return f"({', '.join(map(str, value))})"
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return str(value)


# -- custom autograd Functions ---------------------------------------------------------------


class RecordingContext:
    """Stands in for the ctx autograd hands a Function, so that forward and backward can be
    called directly: what forward saved can be inspected, and backward runs on this thread,
    where the grader can watch what it calls (the autograd engine may run it on another)."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        self._saved: tuple[torch.Tensor | None, ...] = ()

    def save_for_backward(self, *tensors: torch.Tensor | None) -> None:
        self._saved = tensors

    @property
    def saved_tensors(self) -> tuple[torch.Tensor | None, ...]:
        return self._saved

    def mark_dirty(self, *tensors: torch.Tensor) -> None:
        pass

    def mark_non_differentiable(self, *tensors: torch.Tensor) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value

    def save_for_forward(self, *tensors: torch.Tensor | None) -> None:
        pass

    def saved(self) -> dict[str, torch.Tensor]:
        """Every tensor kept for backward: save_for_backward's and ctx attributes'."""
        found = {f"saved_tensors[{i}]": t for i, t in enumerate(self._saved) if t is not None}
        for name, value in vars(self).items():
            if name.startswith("_") or name == "needs_input_grad":
                continue
            if isinstance(value, torch.Tensor):
                found[f"ctx.{name}"] = value
            elif isinstance(value, (tuple, list)):
                found.update(
                    {
                        f"ctx.{name}[{i}]": v
                        for i, v in enumerate(value)
                        if isinstance(v, torch.Tensor)
                    }
                )
        return found


def call_forward(function: type, *inputs: Any) -> tuple[Any, RecordingContext]:
    """function.forward on inputs, as Function.apply runs it (without grad), and its ctx.

    Supports both styles: forward(ctx, *inputs), and forward(*inputs) with setup_context.
    """
    needs = tuple(isinstance(i, torch.Tensor) and i.is_floating_point() for i in inputs)
    ctx = RecordingContext(needs)
    with torch.no_grad():
        if getattr(function, "setup_context", None) is not getattr(
            torch.autograd.Function, "setup_context", None
        ):
            output = function.forward(*inputs)
            function.setup_context(ctx, inputs, output)
        else:
            output = function.forward(ctx, *inputs)
    return output, ctx


def call_backward(
    function: type, ctx: RecordingContext, *grads: torch.Tensor, given: str
) -> tuple[Any, ...]:
    """function.backward(ctx, *grads), as the engine runs it without create_graph."""
    with torch.no_grad():
        result = function.backward(ctx, *grads)
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(ctx.needs_input_grad):
        fail(
            f"{given}: backward returned {len(result)} value(s), expected one per input of "
            f"forward ({len(ctx.needs_input_grad)}), None for an input that takes no gradient."
        )
    return result


_AUTOGRAD_CALLS = frozenset({
    "torch.autograd.grad", "torch.autograd.backward", "torch.Tensor.backward",
    "torch.Tensor.requires_grad_", "torch.autograd.functional.vjp",
    "torch.autograd.functional.jacobian",
})  # fmt: skip


def expect_backward_by_hand(run: Callable[[], Any], *, given: str) -> Any:
    """run() (a direct call of a Function's backward) must compute the gradient itself.

    Detected at run time: a call to torch.autograd.grad, .backward() or requires_grad_(), or
    any result that carries autograd history (a forward re-run under torch.enable_grad()).
    """
    from torch.overrides import TorchFunctionMode
    from torch.utils._pytree import tree_leaves

    seen: list[str] = []

    class Watch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            name = tracing._qualname(func)
            if name in _AUTOGRAD_CALLS or name.startswith(("torch._functorch", "torch.func")):
                seen.append(name)
            out = func(*args, **(kwargs or {}))
            leaves = tree_leaves(out)
            if any(isinstance(t, torch.Tensor) and t.grad_fn is not None for t in leaves):
                seen.append(f"{name}, which built autograd history")
            return out

    with Watch():
        result = run()
    if seen:
        fail(
            f"{given}: backward used autograd ({', '.join(dict.fromkeys(seen))}). The kata is to "
            "derive the gradient by hand: compute grad_x, grad_weight and grad_bias from "
            "grad_out and what forward saved, with plain tensor operations."
        )
    return result


def expect_function_follows_device(
    run: Callable[..., Any], *inputs: torch.Tensor, device: torch.device, given: str
) -> None:
    """run(*inputs) must compute on the inputs' device: on a real accelerator with --device,
    else on simulated CUDA, where a tensor created on the CPU inside it is a device mismatch."""
    if device.type != "cpu":
        out = run(*(x.to(device) for x in inputs))
        wrong = [t for t in _tensors(out) if t.device.type != device.type]
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
            f"{given} on (simulated) CUDA: mixed devices: {e}. Create new tensors on the "
            "input's device (torch.zeros_like(x), device=x.device)."
        )
    except fake_cuda.Inconclusive as e:
        pytest.skip(f"simulated CUDA could not run this code ({e}); run with a GPU to check")
    wrong = [t for t in _tensors(out) if t.device.type not in fake_cuda.SIMULATED]
    if wrong:
        fail(f"{given} on (simulated) CUDA: a result is on {wrong[0].device}, expected cuda.")


def _tensors(value: Any) -> list[torch.Tensor]:
    from torch.utils._pytree import tree_leaves

    return [t for t in tree_leaves(value) if isinstance(t, torch.Tensor)]


def expect_backward_shapes(
    result: tuple[Any, ...], inputs: tuple[Any, ...], *, names: tuple[str, ...], given: str
) -> None:
    """backward's result: a gradient shaped like each tensor input, None for the others."""
    for name, got, want in zip(names, result, inputs, strict=False):
        if not isinstance(want, torch.Tensor):
            if got is not None:
                fail(f"{given}: backward's {name} should be None, got {type(got).__name__}.")
            continue
        got = expect_tensor(got, f"backward's {name}")
        if got.shape != want.shape:
            fail(
                f"{given}: backward's {name} has shape {_fmt(got.shape)}, expected "
                f"{_fmt(want.shape)}, the shape of its input."
            )


def expect_saves_only_what_backward_needs(
    applied: torch.Tensor, ctx: RecordingContext, x: torch.Tensor, *, allowance: int, given: str
) -> None:
    """What forward kept for backward: nothing with autograd history, and one tensor the size
    of x plus `allowance` numbers at most (statistics, parameters).

    `applied` is an output of the Function's apply on inputs that require grad (its grad_fn is
    the ctx autograd kept); `ctx` records a direct call of forward on x.
    """
    node = applied.grad_fn
    for name, value in vars(node).items() if node is not None else ():
        if isinstance(value, torch.Tensor) and (value.requires_grad or value.grad_fn is not None):
            fail(
                f"{given}: forward keeps ctx.{name} with autograd history, which holds the "
                "input's graph alive until backward. Save tensors with "
                "ctx.save_for_backward(...) instead."
            )
    saved = ctx.saved()
    big = sorted(name for name, t in saved.items() if t.numel() >= x.numel())
    if len(big) > 1:
        fail(
            f"{given}: forward saves {len(big)} tensors the size of x ({', '.join(big)}). One is "
            "enough: x̂, or x with its statistics."
        )
    total = sum(t.numel() for t in saved.values())
    if total > x.numel() + allowance:
        fail(
            f"{given}: forward saves {total} numbers for backward, more than one tensor the size "
            f"of x ({x.numel()}) and a few statistics."
        )


def expect_gradcheck(
    fn: Callable[..., Any], inputs: tuple[torch.Tensor, ...], *, given: str
) -> None:
    """torch.autograd.gradcheck(fn, inputs) passes: backward is the derivative of forward.

    Finite differences in float64 need a forward that computes in float64: one that computes a
    float64 input in float32 (a dtype policy, judged in torch parity) has steps of float32's
    size, which gradcheck's tiny eps cannot see past. Such a forward is skipped, saying so;
    its gradients are still compared with autograd's at float32's tolerance.
    """
    from torch.autograd.gradcheck import GradcheckError

    x, rest = inputs[0], inputs[1:]
    try:
        rounded = x.dtype == torch.float64 and not computes_in_float64(
            lambda v: fn(v, *rest), x.detach()
        )
    except (Exception, pytest.fail.Exception):  # gradcheck below reports it, as it always has
        rounded = False
    if rounded:
        pytest.skip(
            "your forward rounds a float64 input to float32, which float64 finite differences "
            "cannot see past; torch parity's float64 check names it"
        )
    try:
        torch.autograd.gradcheck(fn, inputs)
    except GradcheckError as e:
        fail(f"{given} failed: {str(e).splitlines()[0]}")
