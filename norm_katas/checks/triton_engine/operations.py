"""The operations an interpreted kernel runs, recorded with their operand types: what the probe
blames a fault of the engine on (probe.blamed), and so what a call's note names.

Interpreted only. The interpreter runs a kernel's operations as methods of one builder object
(create_fmul, binary_op, ...), in every release from 3.0 on: `record` wraps them once.
"""

from contextlib import contextmanager
from typing import Any

from norm_katas.checks.triton_engine import mode


class Ops:
    seen: set | None = None  # (operation, operand types) run since recording began
    # The operations worth recording: after the probe, only those of a fault it found (what
    # blamed() compares with), the rest being tens of thousands per grading; None: every one.
    wanted: frozenset[str] | None = None


@contextmanager
def recording():
    """The interpreter operations run inside the block, as a set of (name, *operand types)."""
    Ops.seen = seen = set()
    try:
        yield seen
    finally:
        Ops.seen = None


_SCALAR_NAMES: dict[Any, str] = {}  # a Triton scalar dtype -> its name, e.g. "fp32"


def _scalar_name(dtype) -> str:
    scalar = dtype.scalar
    try:
        name = _SCALAR_NAMES.get(scalar)
    except TypeError:  # pointer types are not hashable
        return str(scalar)
    if name is None:
        name = _SCALAR_NAMES[scalar] = str(scalar)
    return name


def _operand_types(args, tensors: tuple[type, ...], dtype: type) -> tuple[str, ...]:
    """The scalar type of each operand that has one: `tensors` are the interpreter's tensor
    classes (its TensorHandle and tl.tensor) and `dtype` is tl.dtype, looked up once, as this
    runs at every operation."""
    types = []
    for a in args:
        if isinstance(a, tensors):
            types.append(_scalar_name(a.dtype))
        elif isinstance(a, dtype):
            types.append(_scalar_name(a))
    return tuple(types)


def _recorded(name: str, method):
    from triton.runtime.interpreter import TensorHandle

    tensors, dtype = (TensorHandle, mode.tl.tensor), mode.tl.dtype

    def recorded(*args, **kwargs):
        if Ops.seen is not None and (Ops.wanted is None or name in Ops.wanted):
            Ops.seen.add((name, *_operand_types(args, tensors, dtype)))
        return method(*args, **kwargs)

    recorded.norm_katas_recorded = True
    return recorded


def record() -> None:
    """Wrap the interpreter's builder (each operation recorded with its operand types) and its
    sum reduction (numpy's, beside the builder)."""
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    for name in dir(builder):
        if not (name.startswith("create_") or name.endswith("_op") or name == "cast_impl"):
            continue
        method = getattr(builder, name, None)
        if callable(method) and not getattr(method, "norm_katas_recorded", False):
            setattr(builder, name, _recorded(name, method))
    reduce_ops = getattr(interpreter, "ReduceOps", None)
    total = getattr(reduce_ops, "sum", None)
    if total is not None and not getattr(total, "norm_katas_recorded", False):
        reduce_ops.sum = _recorded("ReduceOps.sum", total)
