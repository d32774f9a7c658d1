"""Record what a piece of code asks torch to do, at two levels.

The torch-function level sees the calls the learner wrote (F.rms_norm decomposes into
pow/mean/rsqrt before reaching the dispatcher on CPU builds, so ATen alone would miss it);
the ATen level sees everything that runs (a direct torch.ops.aten call, a built-in module).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from grader.torch_compat import DispatchMode


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


def record(fn: Callable[[], Any]) -> tuple[Any, Trace]:
    """Run fn() and return its result with everything it called."""
    trace = Trace()
    with _FunctionRecorder(trace), _OpRecorder(trace):
        result = fn()
    return result, trace
