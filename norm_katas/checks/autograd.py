"""The custom torch.autograd.Function of the backward katas: called directly with a recording
ctx, watched for autograd inside backward, and checked with gradcheck."""

from __future__ import annotations

import traceback
import types
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from norm_katas.checks.comparisons import _fmt, expect_tensor
from norm_katas.runtime import tracing
from norm_katas.runtime.outcomes import fail


def expect_through_function(
    cls: Any, name: str, run: Callable[[], Any], *, caller: str, inputs: str = "x, weight, bias"
) -> None:
    """cls must be a torch.autograd.Function, and run() (the learner's wrapper, `caller`, given
    `inputs`) must return the output of cls.apply, so that the learner's backward computes the
    gradient."""
    if not (isinstance(cls, type) and issubclass(cls, torch.autograd.Function)):
        fail(f"{name} should be a subclass of torch.autograd.Function.")
    y = expect_tensor(run(), caller)
    node = type(y.grad_fn).__name__ if y.grad_fn is not None else "no grad_fn"
    if node != f"{cls.__name__}Backward":
        fail(
            f"{caller}({inputs}) produced an output whose grad_fn is {node}, not "
            f"{cls.__name__}Backward: it must return {name}.apply({inputs}, eps), so "
            "that your backward computes the gradient."
        )


def expect_node_of(node: Any, function: Any, *, name: str, given: str, returns: str) -> None:
    """node, an output's grad_fn, is the learner's `function`'s (or a subclass's): judged by
    class, not by name, since `name`, the learner's name for it, may stand for a class named
    otherwise (Liger's LigerRMSNormFunction), whose node is called after it. `given` names
    the call, `returns` what its forward must return."""
    through = getattr(type(node), "_forward_cls", None)
    if not (
        isinstance(through, type) and isinstance(function, type) and issubclass(through, function)
    ):
        fail(
            f"{given} produced an output whose grad_fn is {type(node).__name__}, not your "
            f"{name}'s: its forward must return {returns}, so that your backward computes the "
            "gradients."
        )


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

    @property
    def saved_variables(self) -> tuple[torch.Tensor | None, ...]:
        """torch's deprecated name for saved_tensors, which torch still serves, with a warning."""
        warnings.warn(
            "'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2
        )
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
        """Every tensor kept for backward: save_for_backward's, and those held by ctx's attributes,
        however deep in dicts, lists, tuples, sets or objects."""
        found = {f"saved_tensors[{i}]": t for i, t in enumerate(self._saved) if t is not None}
        for name, value in vars(self).items():
            if name.startswith("_") or name in ("needs_input_grad", "materialize_grads"):
                continue
            found.update(tensors_within(value, f"ctx.{name}"))
        return found


def tensors_within(value: Any, name: str) -> Iterator[tuple[str, torch.Tensor]]:
    """(where, tensor) for each tensor `value` holds: itself, or inside dicts, lists, tuples,
    sets and the attributes of plain objects, to a few levels, each object once."""
    seen: set[int] = set()

    def walk(value: Any, name: str, depth: int) -> Iterator[tuple[str, torch.Tensor]]:
        if isinstance(value, torch.Tensor):
            yield name, value
            return
        if depth > 6 or id(value) in seen or isinstance(value, _OPAQUE):
            return
        seen.add(id(value))
        if isinstance(value, dict):
            for key, item in list(value.items()):
                yield from walk(item, f"{name}[{key!r}]", depth + 1)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                yield from walk(item, f"{name}[{i}]", depth + 1)
        elif isinstance(value, (set, frozenset)):
            for item in value:
                yield from walk(item, f"an element of {name}", depth + 1)
        elif hasattr(value, "__dict__"):
            for attr, item in list(vars(value).items()):
                yield from walk(item, f"{name}.{attr}", depth + 1)

    yield from walk(value, name, 0)


# Values never searched for tensors: scalars, strings, and code (a class, a function, a module).
_OPAQUE = (
    str, bytes, int, float, complex, bool, type, types.ModuleType, types.FunctionType,
    types.BuiltinFunctionType, types.MethodType, torch.dtype, torch.device,
)  # fmt: skip


def call_forward(function: type, *inputs: Any) -> tuple[Any, RecordingContext]:
    """function.forward on inputs, as Function.apply runs it (without grad), and its ctx.

    Supports both styles: forward(ctx, *inputs), and forward(*inputs) with setup_context.
    """
    needs = tuple(isinstance(i, torch.Tensor) and i.is_floating_point() for i in inputs)
    ctx = RecordingContext(needs)
    # Each input that takes a gradient comes as apply would hand it over: requiring grad, so that
    # forward code that saves only `if x.requires_grad` (attorch's) saves. The same storage, so
    # what forward writes into it, and where its kernels read, are as before.
    inputs = tuple(
        i.detach().requires_grad_() if need and not i.requires_grad else i
        for i, need in zip(inputs, needs, strict=True)
    )
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
# Whole namespaces of autograd transforms, matched by dotted component: torch.functional
# (einsum, tensordot, norm) is plain tensor functions, not torch.func.
_AUTOGRAD_MODULES = ("torch._functorch", "torch.func")


def expect_backward_by_hand(
    run: Callable[[], Any], *, given: str, grads: str = "grad_x, grad_weight and grad_bias"
) -> Any:
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
            if name in _AUTOGRAD_CALLS or tracing.in_namespace(name, *_AUTOGRAD_MODULES):
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
            f"derive the gradient by hand: compute {grads} from grad_out and what forward "
            "saved, with plain tensor operations."
        )
    return result


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
    """What forward kept for backward: no tensor that requires grad or has autograd history as a
    plain attribute of ctx, and the memory of one tensor the size of x plus `allowance` numbers
    at most (statistics, parameters).

    `applied` is an output of the Function's apply on inputs that require grad (its grad_fn is
    the ctx autograd kept); `ctx` records a direct call of forward on x. Memory is counted by
    the storage each saved tensor holds alive, once per storage: a view (an expanded per-row
    statistic, x reshaped) costs what its storage does, not its number of elements.
    """
    node = applied.grad_fn
    for attr, value in vars(node).items() if node is not None else ():
        for name, t in tensors_within(value, f"ctx.{attr}"):
            if t.grad_fn is not None:
                fail(
                    f"{given}: forward keeps {name}, a tensor with autograd history, as a plain "
                    "attribute of ctx, which keeps it and its graph referenced for as long as "
                    "the ctx lives. Save tensors with ctx.save_for_backward(...), which "
                    "releases them after backward."
                )
            if t.requires_grad:
                fail(
                    f"{given}: forward keeps {name}, a tensor that requires grad (an input of "
                    "forward), as a plain attribute of ctx. Save it with "
                    "ctx.save_for_backward(...), which checks that nothing changed it in place "
                    "before backward (an optimizer step, say) and releases it after backward."
                )
    held = _storages(ctx.saved())
    big = [names for names, n in held if n >= x.numel()]
    if len(big) > 1:
        shown = ", ".join(" = ".join(names) for names in big)
        fail(
            f"{given}: forward saves {len(big)} separate tensors the size of x ({shown}). One "
            "is enough: x̂, or x with its statistics."
        )
    total = sum(n for _, n in held)
    if total > x.numel() + allowance:
        fail(
            f"{given}: the tensors forward saves hold {total} numbers for backward, more than "
            f"one tensor the size of x ({x.numel()}) and a few statistics."
        )


def _storages(saved: dict[str, torch.Tensor]) -> list[tuple[list[str], int]]:
    """The saved tensors grouped by the storage they hold alive: (their names, the storage's
    size in elements of their dtype), in the order first saved."""
    groups: dict[Any, tuple[list[str], int]] = {}
    for name, t in saved.items():
        try:
            storage = t.untyped_storage()
            key: Any = (t.device, storage.data_ptr()) if storage.nbytes() else ("empty", name)
            size = storage.nbytes() // t.element_size()
        except (RuntimeError, NotImplementedError):  # no storage of its own to measure
            key, size = ("tensor", name), t.numel()
        names, largest = groups.get(key, ([], 0))
        groups[key] = ([*names, name], max(largest, size))
    return list(groups.values())


# Slopes of a float64 computation over steps of 1e-6 and 2e-6 agree to about 1e-10 of the
# largest; rounding to float32 anywhere inside makes them differ by percents. Past this bound,
# gradcheck's finite differences (atol 1e-5, rtol 1e-3) are noise.
FINITE_DIFFERENCE_NOISE = 1e-6


def finite_difference_noise(run: Callable[[torch.Tensor], Any], x: torch.Tensor) -> float:
    """How much run's slope at a float64 x, along one seeded direction, changes between steps of
    1e-6 (gradcheck's) and 2e-6, relative to its largest element: about 1e-10 for a computation
    in float64, and percents for one that rounds to float32 inside (a statistic, the output),
    whose output moves in float32's steps."""
    g = torch.Generator().manual_seed(20240)
    v = torch.randn(x.shape, dtype=x.dtype, generator=g).to(x.device)

    def slope(h: float) -> torch.Tensor:
        with torch.no_grad():
            up, down = expect_tensor(run(x + h * v)), expect_tensor(run(x - h * v))
        return (up.double() - down.double()) / (2 * h)

    near, far = slope(1e-6), slope(2e-6)
    return ((near - far).abs().max() / near.abs().max().clamp_min(1e-300)).item()


def expect_gradcheck(
    fn: Callable[..., Any], inputs: tuple[torch.Tensor, ...], *, given: str
) -> None:
    """torch.autograd.gradcheck(fn, inputs) passes: backward is the derivative of forward.

    Finite differences in float64 need a forward that computes in float64: one that rounds to
    float32 anywhere (a dtype policy, judged in torch parity) moves in float32's steps, which
    gradcheck's tiny eps cannot see past, and its finite differences are noise. Such a forward
    is skipped, saying so; its gradients are still compared with autograd's at float32's
    tolerance. An error raised in the learner's code fails, saying where: gradcheck runs the
    function through autograd, forward then backward, as training does.
    """
    from torch.autograd.gradcheck import GradcheckError

    x, rest = inputs[0], inputs[1:]
    try:
        noise = (
            finite_difference_noise(lambda v: fn(v, *rest), x.detach())
            if x.dtype == torch.float64
            else 0.0
        )
    except (Exception, pytest.fail.Exception):  # gradcheck below reports it
        noise = 0.0
    if noise > FINITE_DIFFERENCE_NOISE:
        pytest.skip(
            "your forward's float64 output is not smooth at gradcheck's step: its slopes over "
            f"steps of 1e-6 and 2e-6 differ by {noise:.2g} of the largest, so finite differences "
            "are noise and cannot judge your backward. Rounding to float32 inside forward does "
            "this; torch parity's float64 check compares your float64 results with torch's"
        )
    try:
        torch.autograd.gradcheck(fn, inputs)
    except GradcheckError as e:
        # Its first line names the output and input ("... with respect to input 0,"); the
        # matrices that follow are too long for a report.
        first = str(e).strip().splitlines()[0].rstrip(",:; ")
        why = (
            " (inputs count from 0 in the order the function takes them): the gradient your "
            "backward returns for that input is not the derivative of your forward"
            if first.startswith("Jacobian mismatch")
            else ""
        )
        fail(f"{given} failed: {first}{why}.")
    except NotImplementedError:
        raise
    except Exception as e:  # the learner's code raised: say where, and that it ran in autograd
        said = str(e).strip().rstrip(".")
        fail(
            f"{given}: your code raised {type(e).__name__}: {said}{learner_line(e)}. gradcheck "
            "runs your function through autograd, forward then backward, on float64 inputs "
            "that require grad."
        )


def learner_line(error: BaseException) -> str:
    """', at FILE line N: code' for the innermost frame of the learner's code in the error's
    traceback, or '' where none is."""
    from norm_katas.runtime.loader import display_path

    frames = [
        f for f in traceback.extract_tb(error.__traceback__) if tracing.is_learner_code(f.filename)
    ]
    if not frames:
        return ""
    frame = frames[-1]
    where = display_path(Path(frame.filename)) if not frame.filename.startswith("<") else ""
    return f", at {where or frame.filename} line {frame.lineno}: {(frame.line or '').strip()}"
