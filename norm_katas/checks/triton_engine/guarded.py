"""The learner's function run fenced and watched: what Oversight.run wraps every call in.

- Fences: each tensor the function is given or allocates lies in a storage that runs on past
  its last element, filled (`fenced`), so that a store past its end is seen, compiled too.
- Torch work: `Watch` records the ATen operations the function runs on the activations outside
  Triton's own code, and fences every float tensor it allocates (filled with SENTINEL).
- Launches: `counting_launches` counts them, tells the memory audit each launch's arguments
  (interpreted), and runs only some programs of each where a suite samples them.
"""

import inspect
import os
import sys
import types
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import torch
from torch.utils._pytree import tree_flatten

from norm_katas.checks import shape_of
from norm_katas.checks.triton_engine import mode, races
from norm_katas.checks.triton_engine.memory import Audit, Region
from norm_katas.runtime.torch_compat import DispatchMode

# Fills every float tensor the function allocates, and the fence after it: exact in float16,
# bfloat16 and float32, and far from any normalized output (|y| <= sqrt(N) * |weight|).
SENTINEL = -12288.0
FENCE = 16384  # elements after every tensor's last one, besides the tensor's own span

# What torch may always do outside the kernel: allocate (fenced, see Watch).
FACTORIES = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros",
    "zeros_like", "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full",
})  # fmt: skip


def span_of(t: torch.Tensor) -> int:
    """Elements from a tensor's first to its last, in its storage (its strides included)."""
    if t.numel() == 0:
        return 0
    return 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride(), strict=True))


def fenced(t: torch.Tensor, fill: float, fence: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A tensor with t's shape and strides in a storage `fence` elements longer, filled with
    `fill` wherever t has no element; and that whole storage, as a flat tensor."""
    span = span_of(t)
    storage = torch.full((span + fence,), fill, dtype=t.dtype, device=t.device)
    out = storage.new_empty(0).set_(storage.untyped_storage(), 0, t.shape, t.stride())
    return out, storage


def region_of(t: torch.Tensor, name: str) -> Region:
    """The bytes of t's elements, first to last: what a kernel given t may touch."""
    start = t.data_ptr()
    return Region(start, start + span_of(t) * t.element_size(), name, span_of(t))


def _inside_triton() -> bool:
    """Whether Triton's own code (its interpreter or launcher) is on the call stack."""
    triton_dir = _triton_dir()
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.startswith(triton_dir):
            return True
        frame = frame.f_back
    return False


@cache
def _triton_dir() -> str:
    return str(Path(mode.triton.__file__).parent) + os.sep


def storage_of(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


class Watch(DispatchMode):
    """Records the torch work the function does on the activations outside Triton, and fences
    what it allocates.

    The activations are the first input (x, or the first few inputs: x and a residual), every
    tensor the function allocates (the output),
    and whatever torch computes from them. Work on the other inputs alone (a float32 copy of a
    weight's N elements) is not counted: it is not a pass over the activations.
    """

    def __init__(self, xs: list[torch.Tensor], fence: int, allowed: frozenset[str]) -> None:
        super().__init__()
        self.fence = fence
        self.allowed = FACTORIES | allowed
        self.activations = {storage_of(x) for x in xs}  # storages of activations, or made from them
        self.work: list[tuple[str, int]] = []  # (ATen op, largest tensor it touched)
        self.allocated: list[tuple[torch.Tensor, torch.Tensor]] = []  # (storage, the tensor)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        if _inside_triton():  # the interpreter copying arguments, the launcher
            return result
        name = func.overloadpacket.__name__
        if name in FACTORIES and isinstance(result, torch.Tensor) and result.is_floating_point():
            out, storage = fenced(result, SENTINEL, self.fence)
            if not name.startswith(("empty", "new_empty")):
                out.copy_(result)  # zeros, ones, full: keep their values
            self.allocated.append((storage, out))
            self.activations.add(storage_of(out))
            if Audit.known is not None:
                Audit.known[storage_of(out)] = region_of(
                    out, f"the {shape_of(out)} tensor allocated"
                )
            return out
        # torch's own ops only: a custom op (torch.library.triton_op) wrapping the kernel is fine.
        if name in self.allowed or getattr(func, "namespace", "aten") != "aten":
            return result
        inputs = [t for t in tree_flatten((args, kwargs))[0] if torch.is_tensor(t)]
        if any(storage_of(t) in self.activations for t in inputs):
            outputs = [t for t in tree_flatten(result)[0] if torch.is_tensor(t)]
            self.activations.update(storage_of(t) for t in outputs)
            self.work.append((name, max((t.numel() for t in inputs + outputs), default=0)))
        return result


@contextmanager
def counting_launches(counted: list[int]):
    """Counts kernel launches in counted[0]: GridExecutor.__call__ (interpreter),
    JITFunction.run (compiled); each interpreted launch also tells the audit its arguments.
    counted[1] is 1 if this Triton's launch entry points were found."""
    targets = []
    try:
        from triton.runtime.interpreter import GridExecutor

        targets.append((GridExecutor, "__call__"))
    except ImportError:
        GridExecutor = type(None)  # no interpreter: nothing to sample
    from triton.runtime.jit import JITFunction

    targets.append((JITFunction, "run"))
    patched = []
    for cls, name in targets:
        original = cls.__dict__.get(name)
        if original is None:
            continue

        def launched(self, *args, _original=original, **kwargs):
            counted[0] += 1
            if hasattr(self, "arg_names") and Audit.known is not None:
                name = getattr(getattr(self, "fn", None), "__name__", "the kernel")
                Audit.launch(self.arg_names, args, kwargs, kernel=name)
            fn = getattr(self, "fn", None)
            sampled = Audit.sample is not None and isinstance(self, GridExecutor)
            if sampled:
                self.fn = _only(fn, Audit.sample)
            try:
                return _original(self, *args, **kwargs)
            finally:
                if sampled:
                    self.fn = fn
                if Audit.races is not None:
                    Audit.races.finish()

        setattr(cls, name, launched)
        patched.append((cls, name, original))
    counted[1] = int(bool(patched))
    try:
        yield
    finally:
        for cls, name, original in patched:
            setattr(cls, name, original)


def _only(fn, programs: frozenset[int]):
    """The kernel as the interpreter calls it for each program, running only `programs` (by the
    first grid index): the others return at once. It keeps the kernel's globals and signature,
    which the interpreter reads (the modules to patch, the arguments to bind)."""
    program = races.program  # a cell of the closure: the function runs with fn's globals

    def run_program(*args, **kwargs):
        if program()[0] in programs:
            return fn(*args, **kwargs)
        return None

    code, cells = run_program.__code__, run_program.__closure__
    only = types.FunctionType(code, fn.__globals__, fn.__name__, None, cells)
    only.__signature__ = inspect.signature(fn)
    return only
