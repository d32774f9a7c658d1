"""Record what a piece of code asks torch, and Python, to do.

Torch, at two levels.

The torch-function level sees the calls the learner wrote (F.rms_norm decomposes into
pow/mean/rsqrt before reaching the dispatcher on CPU builds, so ATen alone would miss it);
the ATen level sees everything that runs (a direct torch.ops.aten call, a built-in module).
Python: the lines run in the learner's own code, and calls into Python's or numpy's RNG.
"""

from __future__ import annotations

import contextlib
import functools
import random
import sys
import sysconfig
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from norm_katas.content import registry
from norm_katas.runtime.torch_compat import DispatchMode


@dataclass
class Trace:
    functions: list[str] = field(
        default_factory=list
    )  # qualified names, e.g. torch.nn.functional.layer_norm
    ops: list[str] = field(default_factory=list)  # ATen overload packets, e.g. native_layer_norm

    def names(self) -> set[str]:
        """Bare names at both levels, for matching against a forbidden list."""
        return {_bare(n) for n in self.functions} | set(self.ops)

    def first_call_of(self, forbidden: set[str]) -> str | None:
        for name in self.functions:
            if _bare(name) in forbidden:
                return name
        for op in self.ops:
            if op in forbidden:
                return f"torch.ops.aten.{op}"
        return None


def _bare(name: str) -> str:
    return name.rsplit(".", 1)[-1].removeprefix("aten::")


def in_namespace(name: str, *namespaces: str) -> bool:
    """Whether the qualified `name` is one of `namespaces` or inside one, by whole dotted
    components: torch.func.grad is in torch.func, torch.functional.einsum is not."""
    return any(name == space or name.startswith(f"{space}.") for space in namespaces)


def _qualname(func: Any) -> str:
    packet = getattr(func, "overloadpacket", func)
    if isinstance(
        packet, torch._ops.OpOverloadPacket
    ):  # torch.ops.aten.x(.default) called directly
        return f"torch.ops.aten.{packet.__name__}"
    module = getattr(func, "__module__", None) or "torch"
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    if name.startswith("TensorBase.") or name.startswith("_TensorBase."):
        name = "Tensor." + name.split(".", 1)[1]
    return f"{module}.{name}" if not name.startswith("Tensor.") else f"torch.{name}"


class _FunctionRecorder(TorchFunctionMode):
    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.trace.functions.append(_qualname(func))
        return func(*args, **(kwargs or {}))


class _OpRecorder(DispatchMode):
    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.trace.ops.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def recording(trace: Trace) -> Iterator[Trace]:
    """Add to trace what the code in the with block calls, at both levels."""
    with _FunctionRecorder(trace), _OpRecorder(trace):
        yield trace


def record(fn: Callable[[], Any]) -> tuple[Any, Trace]:
    """Run fn() and return its result with everything it called."""
    with recording(Trace()) as trace:
        result = fn()
    return result, trace


def python_calls(
    fn: Callable[[], Any], functions: Iterable[Callable[..., Any]]
) -> tuple[Any, list[str]]:
    """Run fn(); also return which of `functions` (plain Python functions) it called, however
    reached: by name, through an alias imported before, or from another library's code (torch's
    own fusion helpers, called by torch.ao's fuse_modules, say). Told by their code objects, as
    module.qualname, in the order first called."""
    codes = {
        f.__code__: f"{f.__module__}.{f.__qualname__}"
        for f in functions
        if getattr(f, "__code__", None) is not None
    }
    seen: list[str] = []
    previous = sys.getprofile()

    def profiler(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and (name := codes.get(frame.f_code)) is not None and name not in seen:
            seen.append(name)
        if previous is not None:  # a profiler already there (a debugger's) keeps its events
            previous(frame, event, arg)

    sys.setprofile(profiler)
    try:
        result = fn()
    finally:
        sys.setprofile(previous)
    return result, seen


# -- Python-level work in the learner's code ------------------------------------------------

_GRADER_DIRS = (Path(__file__).resolve().parents[1],)  # the whole norm_katas package
_SUITES = registry.ROOT / "tests"
# The reference solutions are graded as learner files are: also where an installed norm-katas
# ships them, inside the package.
_SOLUTIONS = registry.ROOT / "solutions"
_LIBRARY_DIRS = tuple(
    {
        Path(p).resolve()
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        if (p := sysconfig.get_paths().get(key))
    }
    | {Path(torch.__file__).resolve().parent.parent}
)


@functools.cache
def is_learner_code(filename: str) -> bool:
    """Code that is neither torch's, a library's, the stdlib's nor the grader's own."""
    if filename.startswith("<frozen"):
        return False
    if filename.startswith("<"):
        return True  # exec'd or generated: written by the learner's file
    path = Path(filename).resolve()
    if path.is_relative_to(_SUITES) and not path.is_relative_to(_SUITES / "catalogue"):
        return False  # the suites and self-tests (the catalogue stands in for learner files)
    if path.is_relative_to(_SOLUTIONS):
        return True
    return not any(path.is_relative_to(d) for d in (*_GRADER_DIRS, *_LIBRARY_DIRS))


def count_python_events(fn: Callable[[], Any]) -> tuple[Any, int]:
    """Run fn(); also count the Python calls, lines and loop jumps executed in learner code.

    A Python loop over elements makes the count grow with the input even when it dispatches
    no tensor operation per element (a mask built with Python's random module, say).
    """
    monitoring = getattr(sys, "monitoring", None)  # 3.12+: cheap, and sees inlined loops
    return _count_monitoring(fn, monitoring) if monitoring else _count_settrace(fn)


def _count_settrace(fn: Callable[[], Any]) -> tuple[Any, int]:
    count = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"  # settrace reports a loop's backward jump as a line too
        return local

    def on_call(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if not is_learner_code(frame.f_code.co_filename):
            return None
        count += 1
        return local

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        result = fn()
    finally:
        sys.settrace(previous)
    return result, count


def _count_monitoring(fn: Callable[[], Any], mon: Any) -> tuple[Any, int]:
    tool = next((t for t in (3, 4, 5) if mon.get_tool(t) is None), None)
    if tool is None:  # every spare tool id taken (by a debugger or profiler): fall back
        return _count_settrace(fn)
    events = mon.events
    count = 0

    def on_event(code: Any, *_: Any) -> Any:
        nonlocal count
        if is_learner_code(code.co_filename):
            count += 1
            return None
        return mon.DISABLE  # never report this location again: keeps torch's code fast

    mon.use_tool_id(tool, "norm-katas")
    kinds = (events.PY_START, events.LINE, events.JUMP)
    try:
        mon.restart_events()
        for kind in kinds:
            mon.register_callback(tool, kind, on_event)
        mon.set_events(tool, events.PY_START | events.LINE | events.JUMP)
        result = fn()
    finally:
        mon.set_events(tool, 0)
        for kind in kinds:
            mon.register_callback(tool, kind, None)
        mon.free_tool_id(tool)
    return result, count


# Python's random module: the draws, not its setup (numpy seeds itself through it, for one).
_PY_DRAWS = frozenset(n for n in random.__all__ if n[0].islower()) - {
    "seed",
    "getstate",
    "setstate",
}


def host_rng_calls(fn: Callable[[], Any]) -> list[str]:
    """The draws from Python's random module or numpy's generators that fn() made."""
    seen: set[str] = set()
    random_py = str(Path(random.__file__).resolve())

    def profiler(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and getattr(arg, "__name__", "") in _PY_DRAWS:
            if type(getattr(arg, "__self__", None)).__module__ in ("random", "_random"):
                seen.add(f"random.{arg.__name__}")
        elif event == "call" and frame.f_code.co_filename == random_py:
            name = frame.f_code.co_name
            seen.update([f"random.{name}"] if name in _PY_DRAWS else [])

    # numpy's generators are compiled with Cython, which the profiler does not see: record
    # calls through numpy.random's module-level functions instead, for the duration of fn().
    patched: dict[str, Any] = {}
    np_random = sys.modules.get("numpy.random")
    if np_random is not None:
        for name in dir(np_random):
            value = getattr(np_random, name)
            if not name.startswith("_") and callable(value) and not isinstance(value, type):
                patched[name] = value
                setattr(np_random, name, _recording(value, f"numpy.random.{name}", seen))
    previous = sys.getprofile()
    sys.setprofile(profiler)
    try:
        fn()
    finally:
        sys.setprofile(previous)
        for name, value in patched.items():
            setattr(np_random, name, value)
    return sorted(seen)


def _recording(fn: Callable[..., Any], name: str, seen: set[str]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        seen.add(name)
        return fn(*args, **kwargs)

    return wrapper
