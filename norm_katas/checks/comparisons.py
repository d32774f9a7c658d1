"""Comparing values: tolerances per dtype and device, and messages that name the first
discrepancy."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch

from norm_katas.runtime.outcomes import fail, fail_for

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


def dtype_name(dtype: torch.dtype) -> str:
    """torch.bfloat16 -> "bfloat16", as the learner writes it in a message."""
    return str(dtype).removeprefix("torch.")


def tolerance(dtype: torch.dtype, device: torch.device | str = "cpu") -> tuple[float, float]:
    """(rtol, atol) for comparing values of `dtype` computed on `device`."""
    kind = torch.device(device).type
    return DEVICE_TOLERANCE.get(kind, {}).get(dtype, TOLERANCE.get(dtype, (0.0, 0.0)))


def shape_of(x: torch.Tensor) -> str:
    """'(4, 8) float32', the way inputs are described in messages."""
    return f"({', '.join(map(str, x.shape))}) {str(x.dtype).removeprefix('torch.')}"


def describe_call(name: str, *args: Any, **kwargs: Any) -> str:
    """'BatchNorm2d(3, momentum=None)': how a constructor call is shown in messages."""
    shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{name}({', '.join(shown)})"


def expect_tensor(out: Any, what: str = "forward") -> torch.Tensor:
    """The value must be a tensor: catches a forgotten `return` or a returned tuple.
    `what` names what returned it ("forward"), or, as "backward's <name>", one of backward's
    gradients, where None is a deliberate answer rather than a forgotten return."""
    if what.startswith("backward's "):
        name = what.removeprefix("backward's ")
        if out is None:
            fail(
                f"backward returned None as {name}, where a tensor is expected: None says "
                "that an input takes no gradient, and this one takes one."
            )
        if not isinstance(out, torch.Tensor):
            fail(f"backward returned a {type(out).__name__} as {name}, expected a torch.Tensor.")
        return out
    if out is None:
        fail(f"{what} returned None instead of a tensor. Did you forget `return`?")
    if not isinstance(out, torch.Tensor):
        fail(f"{what} returned a {type(out).__name__}, expected a torch.Tensor.")
    return out


def expect_stable_under_shift(
    run: Callable[[torch.Tensor], Any], x: torch.Tensor, shift: float, *, given: str
) -> None:
    """run(x) must be run(x − shift), to float32 rounding: a normalization takes each group's
    mean out, so a shift of every value changes nothing, unless the variance is taken as
    E[x²] − E[x]², which loses its digits when the mean is large. `run` is a layer whose output
    does not depend on its earlier calls, or makes a fresh layer for each call.

    Compared with the learner's own output for centred data, not with torch: any other mistake
    (an unbiased variance, say) is in both outputs, so this fails for the instability alone. x
    must lie within a factor of 2 of `shift`, so that x − shift is exact in float32. A
    two-pass variance keeps the two outputs within 1e-4 of each other at a mean of 1000 and a
    spread of 1; E[x²] − E[x]² is off by some hundredths."""
    centred = x - shift
    want = expect_tensor(run(centred.clone())).detach()
    given = (
        f"{given}, against its own output for x − {shift:g} (the same values about 0: "
        "normalizing takes the mean out, so the two outputs are the same)"
    )
    expect_close(run(x.clone()), want, given=given, rtol=0, atol=2e-3)


def expect_eps_in_the_root(
    make: Callable[[float], Callable[[torch.Tensor], Any]],
    x: torch.Tensor,
    eps: float,
    reference: Callable[[torch.Tensor, float], torch.Tensor],
    *,
    name: Callable[[float], str],
    given: str,
    formula_check: str = "test_forward_matches_torch",
) -> None:
    """The learner's normalization with eps (make(eps), built without affine) gives torch's
    output on x (reference(x, eps)): eps added to the variance, or the mean square, inside
    the square root. name(eps) is the layer as messages show it, `given` the input.

    Where the layer's output differs from torch's at eps = 0 as well, what it divides by is
    another check's mistake (a variance over n − 1, the wrong dims, an L2 norm) and this one
    judges eps by the layer's own outputs: any statistic s that scales as the square of x, as
    every variance and mean square does, gives x / √(s(x) + eps) with eps inside the root, so
    the layer on 2x with eps is the layer on x with eps / 4; with eps outside it, √s + eps,
    it is the layer on x with eps / 2, and eps ignored or replaced shows as well. Only a
    clamp (max(s, eps)) passes that test where the statistic is wrong: its own is caught where
    the statistic is right."""
    got = expect_tensor(make(eps)(x.clone()))
    said = f"{name(eps)} on {given}"
    want = reference(x, eps)
    if values_close(got, want):
        return
    unit = x / x.std()  # a spread of 1: at eps = 0 the default eps (1e-5) would not show
    if values_close(expect_tensor(make(0.0)(unit.clone())), reference(unit, 0.0)):
        expect_close(got, want, given=said, judge_dtype=False, judge_shape=False)
        return
    # The premise of judging eps that way: without eps the layer divides by a statistic's
    # square root, so its output on 3x is its output on x. One that divides by the variance
    # itself (no square root) is the formula's mistake, and eps cannot be read off it.
    expect_scale_free(make(0.0), unit, given=f"{name(0.0)} on {given}", owner=formula_check)
    doubled = expect_tensor(make(eps)(2 * x)).detach()
    quartered = expect_tensor(make(eps / 4)(x.clone())).detach()
    expect_close(
        doubled,
        quartered,
        given=(
            f"{name(eps)} on 2x against {name(eps / 4)} on x, {given}. Your layer's output "
            "differs from torch's at eps=0 too (what it divides by is another check's "
            "business), so eps is judged by your layer's own outputs: with eps inside the "
            "square root, the layer on 2x is the layer with eps / 4 on x"
        ),
        what="the output on 2x",
        judge_dtype=False,
        judge_shape=False,
        equal_nan=False,
    )


def expect_scale_free(
    run: Callable[[torch.Tensor], Any], x: torch.Tensor, *, given: str, owner: str
) -> None:
    """run (a normalization without eps) gives the same output on 3x as on x: it divides by a
    square root of a statistic that scales as x² (a variance, a mean square), whatever that
    statistic's divisor. Otherwise the division itself is wrong (by the variance, not its
    root), the mistake of the check `owner`, which a check that reads a divisor or eps off
    the outputs cannot see past."""
    once = expect_tensor(run(x.clone())).detach()
    thrice = expect_tensor(run(3 * x)).detach()
    if once.shape == thrice.shape and values_close(thrice, once):
        return
    fail_for(
        owner,
        f"{given}: the output on 3x differs from the output on x, so it is not x − μ divided by "
        "a standard deviation (or x by a root mean square), which both scale with x: divide by "
        "the square root of the statistic plus eps, not by the statistic itself.",
    )


def influence(
    run: Callable[[torch.Tensor], Any],
    x: torch.Tensor,
    index: tuple[int, ...],
    *,
    given: str,
    counter: tuple[int, ...] | None = None,
) -> torch.Tensor:
    """Which outputs of run change when x[index] alone changes (by 1): a boolean tensor of x's
    shape, the output read in x's shape, its values in order. A normalization's outputs
    change with every input of their group, through its mean and variance, and with no other,
    to the bit: this reads which values form a group, whatever the statistics are (a
    variance over n or n − 1, eps anywhere). Run it on float64 values of spread 1 or so.

    With `counter`, x[counter] moves by −1 as well: for two values of one group its mean stays,
    and only its variance carries the change, so that a variance taken over fewer values than
    the mean (a channel's alone, say) shows."""
    before = expect_tensor(run(x.clone())).detach()
    moved = x.clone()
    moved[index] += 1.0
    if counter is not None:
        moved[counter] -= 1.0
    after = expect_tensor(run(moved)).detach()
    for out in (before, after):
        if out.numel() != x.numel():
            fail(f"{given}: the output has {out.numel()} elements, x {x.numel()}.")
    before, after = before.reshape(x.shape), after.reshape(x.shape)
    return ~((after == before) | (after.isnan() & before.isnan()))


def expect_unscaled(got: Any, with_affine: Any, *, dims: tuple[int, ...], given: str) -> None:
    """got, a layer's output without affine, must be the output x̂ that the same layer built
    with affine scales and shifts into with_affine: with_affine = a · got + b, one a (never 0)
    and one b for each position along `dims`, the dims its weight spans (the channel dim, or
    the normalized dims). Read off the two outputs themselves: how the layer normalizes, and
    what its weight is and does, are other checks' business; that nothing scales or shifts
    the output without affine is this one's. `given` names both layers and the input."""
    got, with_affine = expect_tensor(got).detach(), expect_tensor(with_affine).detach()
    if got.shape != with_affine.shape:
        fail(
            f"{given}: the output has shape {_fmt(got.shape)}, the one with affine "
            f"{_fmt(with_affine.shape)}."
        )
    rest = [d for d in range(got.dim()) if d not in {d % got.dim() for d in dims}]
    order = [*rest, *(d % got.dim() for d in dims)]
    g = got.double().permute(order).reshape(-1, math.prod(got.shape[d] for d in dims))
    y = with_affine.double().permute(order).reshape(g.shape)
    gc, yc = g - g.mean(0), y - y.mean(0)
    scale = (gc * yc).sum(0) / gc.square().sum(0)
    shift = y.mean(0) - scale * g.mean(0)
    fitted = (
        (g * scale + shift)
        .reshape([got.shape[d] for d in order])
        .permute([order.index(d) for d in range(got.dim())])
    )
    # A scale of 0 is a weight of 0, which the checks of the parameters name: blind to it here.
    flat = bool((yc.abs() <= 1e-12 * (1 + y.abs())).all(0).any())
    if (bool((scale.abs() > 1e-6).all()) or flat) and values_close(fitted, with_affine):
        return
    expect_close(
        got,
        with_affine,
        given=(
            f"{given}: the output without affine is no scaled and shifted copy of the output "
            "with affine (one scale and one shift per channel, or per normalized element), so "
            "something else tells them apart"
        ),
        judge_dtype=False,
        equal_nan=False,
    )


def values_close(got: Any, expected: torch.Tensor) -> bool:
    """Whether got is a tensor of expected's values, within the tolerance that
    expect_close(judge_dtype=False, judge_shape=False) allows: a question, never a failure."""
    if not isinstance(got, torch.Tensor) or got.numel() != expected.numel():
        return False
    got = got.reshape(expected.shape)
    if not got.is_floating_point():
        return False
    coarser = min((got.dtype, expected.dtype), key=lambda d: torch.finfo(d).bits)
    rtol, atol = tolerance(coarser, expected.device)
    g, e = got.detach().double().cpu(), expected.detach().double().cpu()
    return bool(torch.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True).all())


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
    judge_dtype: bool = True,
    judge_shape: bool = True,
    equal_nan: bool = True,
) -> None:
    """got must match expected (shape, dtype, device, then values) within TOLERANCE.

    `given` names the setup ("LayerNorm(8) on x (4, 8) float32"); `what` names the value.
    On failure the message shows the first element out of tolerance and the largest error.
    judge_dtype=False, for a check of values whose dtype is another check's (the output's
    dtype, say): a floating got of another dtype is compared by value, at the tolerance of
    the coarser of the two dtypes. judge_shape=False, likewise for the shape: a got with as
    many elements as expected is compared in expected's shape, its values in order.
    equal_nan=False where expected is the learner's own output (a check that compares the
    layer with itself): a NaN there is no agreement.
    """
    got = expect_tensor(got, what)
    if not judge_shape and got.shape != expected.shape and got.numel() == expected.numel():
        got = got.reshape(expected.shape)
    if got.shape != expected.shape:
        fail(f"{given}: {what} has shape {_fmt(got.shape)}, expected {_fmt(expected.shape)}.")
    if not judge_dtype and got.dtype != expected.dtype and got.is_floating_point():
        coarser = min((got.dtype, expected.dtype), key=lambda d: torch.finfo(d).bits)
        default_rtol, default_atol = tolerance(coarser, expected.device)
        rtol = default_rtol if rtol is None else rtol
        atol = default_atol if atol is None else atol
        got = got.to(expected.dtype)
    if got.dtype != expected.dtype:
        fail(f"{given}: {what} has dtype {_fmt(got.dtype)}, expected {_fmt(expected.dtype)}.")
    if got.device != expected.device:
        fail(f"{given}: {what} is on {got.device}, expected {expected.device}.")
    default_rtol, default_atol = tolerance(expected.dtype, expected.device)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    g, e = got.detach().double().cpu(), expected.detach().double().cpu()
    bad = ~torch.isclose(g, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if not bad.any():
        return
    first = tuple(int(i) for i in bad.nonzero()[0])
    diff = (g - e).abs()
    # A NaN is the worst difference of all, and is said as NaN, never as inf.
    ranked = diff.nan_to_num(nan=float("inf"), posinf=torch.finfo(diff.dtype).max)
    worst = tuple(int(i) for i in torch.unravel_index(ranked.argmax(), ranked.shape))
    nan_note = ""
    if g.isnan().any() and not e.isnan().any():
        nan_note = (
            " It contains NaN: from 0/0, the square root of a negative, or memory read before it"
            " was written (torch.empty does not set it)."
        )
    elif not equal_nan and e.isnan().any():  # the reference is the learner's own output
        nan_note = (
            " The expected value is your layer's own output, and it contains NaN, which agrees "
            "with nothing: from 0/0, the square root of a negative, or memory read before it "
            "was written (torch.empty does not set it)."
        )
    want, have = _distinct(e[first].item(), g[first].item())
    fail(
        f"{given}: {what} differs from the expected value at {list(first)}: "
        f"expected {want}, got {have}. "
        f"{int(bad.sum())} of {bad.numel()} elements are off; the largest difference is "
        f"{diff[worst].item():.3g} at {list(worst)} (rtol={rtol:g}, atol={atol:g}).{nan_note}"
    )


def _distinct(want: float, have: float) -> tuple[str, str]:
    """The two values with 6 significant digits, or as many more as it takes to tell them
    apart: a float64 miss of 1e-9 read 'expected 0.706877, got 0.706877'."""
    for digits in range(6, 18):
        shown = f"{want:.{digits}g}", f"{have:.{digits}g}"
        if shown[0] != shown[1]:
            return shown
    return f"{want:.6g}", f"{have:.6g}"


def expect_grads_close(
    got: dict[str, torch.Tensor | None],
    expected: dict[str, torch.Tensor | None],
    *,
    given: str,
    rtol: float | None = None,
    atol: float | None = None,
    backward: bool = False,
) -> None:
    """Compare gradients by name ("input", "weight", ...); a missing gradient fails clearly.
    backward: they are what the learner's backward returned, called directly, where a None is
    its own answer; otherwise autograd's, where None means autograd never reached the input."""
    for name, want in expected.items():
        have = got.get(name)
        if want is not None and have is None:
            if backward:
                label = "grad_x" if name == "input" else f"grad_{name}"
                fail(
                    f"{given}: backward returned None as {label}, where a tensor is expected: "
                    "None says that an input takes no gradient, and this one takes one."
                )
            fail(
                f"{given}: the gradient of {name} is None: autograd never reached it. Is it an "
                "nn.Parameter (or a tensor that requires grad), used in forward through autograd?"
            )
        if want is not None:
            expect_close(have, want, given=given, what=f"gradient of {name}", rtol=rtol, atol=atol)


# An offset whose spacing in each half dtype is a quarter of randn's spread: a mean of such
# values rounded to the dtype is off by up to an eighth of the spread; in float32, by 1e-7 of it.
HALF_OFFSET: dict[torch.dtype, float] = {torch.float16: 384.0, torch.bfloat16: 48.0}


def nonzero_values(
    *shape: int, device: torch.device | str, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Values of magnitude in [0.5, 1.5) and random sign: no zeros, so a dropped one shows."""
    magnitude = torch.rand(shape, dtype=torch.float64) + 0.5
    sign = torch.randint(0, 2, shape) * 2 - 1
    return (magnitude * sign).to(device, dtype)


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


def expect_attributes(obj: Any, given: str, **want: Any) -> None:
    """obj.<name> == value for each name=value, in order; a missing attribute fails, named."""
    for name, value in want.items():
        got = getattr(obj, name, f"no attribute {name}")
        if got != value:
            fail(f"{given}.{name} should be {value}, got {got}.")


def built_with_attributes(
    cls: Callable[..., Any],
    name: str,
    cases: Iterable[tuple[tuple[Any, ...], dict[str, Any], dict[str, Any]]],
) -> Iterator[tuple[Any, str]]:
    """For each (args, kwargs, want) of cases, in turn: cls(*args, **kwargs) with the
    attributes `want` (expect_attributes), yielded with its call as messages show it (`name`
    is the class's), for the checks that follow on it before the next case is built."""
    for args, kwargs, want in cases:
        given = describe_call(name, *args, **kwargs)
        built = cls(*args, **kwargs)
        expect_attributes(built, given, **want)
        yield built, given


def expect_raises(
    errors: type[BaseException] | tuple[type[BaseException], ...],
    run: Callable[[], Any],
    *,
    given: str,
) -> BaseException:
    """run() must raise one of `errors` (NotImplementedError still reads as unfinished, though
    it is a RuntimeError: a stub's TODO is no answer)."""
    errors = errors if isinstance(errors, tuple) else (errors,)
    names = " or ".join(e.__name__ for e in errors)
    try:
        run()
    except NotImplementedError:
        raise
    except errors as e:
        return e
    except Exception as e:
        fail(f"{given} should raise {names}, but raised {type(e).__name__}: {e}")
    fail(f"{given} should raise {names}, but returned normally.")


def expect_rejects_shapes(
    layer: Callable[[torch.Tensor], Any],
    x_shapes: tuple[tuple[int, ...], ...],
    *,
    device: torch.device | str,
    name: str,
) -> None:
    """layer(x) raises RuntimeError (torch's) or ValueError for an x of each shape, drawn in
    turn; `name` is the layer as messages show it."""
    for x_shape in x_shapes:
        x = torch.randn(x_shape, device=device)
        expect_raises(
            (ValueError, RuntimeError), lambda x=x: layer(x), given=f"{name} on x {shape_of(x)}"
        )


def tensors_in(value: Any) -> list[torch.Tensor]:
    """Every tensor in value (a tensor, or tuples, lists and dicts of them), in order."""
    from torch.utils._pytree import tree_leaves

    return [t for t in tree_leaves(value) if isinstance(t, torch.Tensor)]


def _fmt(value: object) -> str:
    if isinstance(value, torch.Size):
        return f"({', '.join(map(str, value))})"
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return str(value)
