"""The Triton engine for the Triton katas: the learner's kernel run for real, and watched.

A suite declares what its function may do (an `Oversight`), starts the engine from a
module-scoped autouse fixture (`start`, before the `kata` fixture imports the learner's file)
and calls the learner's function through `Oversight.run`, its values checked by
`Oversight.expect_values`. What the engine does:

Where the kernel runs. With `--device cuda` on a GPU, compiled by Triton as in production;
everywhere else in Triton's interpreter, so that grading works on any machine, without the
learner setting anything. `start` sets TRITON_INTERPRET (on for the CPU, off for CUDA) and
only then imports Triton: @triton.jit reads it when a kernel is defined, Triton's library
kernels (tl.sum) when triton.language is first imported. If something imported Triton earlier
(torch._dynamo does), it reconciles the library with the mode. The interpreter runs one program
at a time with numpy, so a suite's inputs should be small.

How the engine is proven. Before the learner's file loads, a probe runs small kernels of its
own on what norm kernels exercise, in float32, float16 and bfloat16: loads and stores (masked,
with `other`), casts to and from float32, products and sums in each dtype and mixed with
float32, tl.sum, sqrt and rsqrt, programs at int64 row offsets. A float32 case gone wrong means
nothing can be graded: the grader says so (exit 3). A half-precision one is noted as a fault:
Triton's interpreter computes bfloat16 x bfloat16 and bfloat16 + bfloat16 on the raw bits
(every release from 3.0 to 3.9), and from 3.3 tl.sum of bfloat16 too. The interpreter runs a
kernel's operations as methods of one builder object: each is recorded with its operand types,
and a fault is blamed on the operations only its failing case ran. A call that ran one gets a
note (`Call.fault`) that names the engine and suggests --device cuda: its value checks skip
with it, never fail, and do not count (report.py). Compiled, where operations cannot be seen,
a fault would affect every call in its dtype. The proof depends on the installed engine alone:
a long-lived parent that grades on the CPU (watch mode, a mock) proves it once (`prepare`) for
every grading it forks. Anything else that goes wrong while the engine is set up is the
grader's failure too (exit 3), never the learner's: their file has not even loaded yet.

How every call is overseen (`Oversight.run`):
- Memory. The function gets copies of its tensor inputs whose storage runs on past their last
  element (each input's own fill after it), and every float tensor it allocates is placed in
  such a storage too, filled with SENTINEL: a kernel that reads past a row never crashes the
  grader, a store past the end of the output (or of an input the kernel updates in place) lands
  in the fence and is reported, and an element no program wrote still holds SENTINEL.
  Interpreted, every load and store (atomics too) is checked by address against the tensors
  its launch was given, from first element to last: an access outside them all fails whatever
  the values there would have given, and is turned off so that it touches nothing; a masked
  load without `other=` reads NaN in its masked lanes, which Triton leaves undefined.
  Compiled, Triton cannot be watched so: only stores past the end of a tensor, allocated or
  given, are seen.
- Torch work. The ATen operations the function runs outside Triton's own code are recorded.
  Work on the activations (the first input, or the first `Oversight.activations` inputs, what
  the function allocates, and anything computed from them) fails, copies included
  (.contiguous(), .clone(), .to(), .copy_()); allocation, the views the suite allows, and work
  on the other inputs alone do not. A call that launches no kernel fails too.
Each such failure belongs to the check the suite names for it (Oversight.in_bounds for memory,
Oversight.does_the_work for torch work), which the report ranks it as: whichever check runs
into a mistake first, the headline names it.
"""

import inspect
import os
import sys
import types
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
import torch
from torch.utils._pytree import tree_flatten

from norm_katas.checks import (
    cannot_grade,
    dtype_name,
    expect_close,
    expect_tensor,
    fail,
    fail_for,
    shape_of,
)
from norm_katas.runtime.torch_compat import DispatchMode

# Imported by start(), once it has chosen compiled or interpreted: Triton's own library kernels
# (tl.sum, ...) are built for the interpreter only if TRITON_INTERPRET is set when
# triton.language is first imported.
triton: Any = None
tl: Any = None
INTERPRETED = False

# Fills every float tensor the function allocates, and the fence after it: exact in float16,
# bfloat16 and float32, and far from any normalized output (|y| <= sqrt(N) * |weight|).
SENTINEL = -12288.0
FENCE = 16384  # elements after every tensor's last one, besides the tensor's own span
HALF = (torch.float16, torch.bfloat16)

# What torch may always do outside the kernel: allocate (fenced, see _Watch).
FACTORIES = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros",
    "zeros_like", "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full",
})  # fmt: skip
# The ATen copies of the activations, by what the learner wrote.
COPIES = {
    "clone": ".contiguous() or .clone()",
    "_to_copy": ".to() or .float()",
    "copy_": ".copy_()",
}


def _version(text: str) -> tuple[int, int]:
    parts = text.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return (0, 0)


# -- the engine, proven on what norm kernels exercise -----------------------------------------

# The probe's kernels: each exercises one operation on 8 lanes (the probe's `cases` say which
# dtypes). Plain functions here, jitted once start() has chosen compiled or interpreted.
# No `from __future__ import annotations` in this module: Triton 3.0 and 3.1's interpreter
# would read its kernels' annotations as strings.


def _probe_copy(X, Y):
    """Y[:6] = X[:6], Y[6] = -1.5 (the masked load's other), Y[7] untouched; Y[8:] = X."""
    cols = tl.arange(0, 8)
    part = tl.load(X + cols, mask=cols < 6, other=-1.5)
    tl.store(Y + cols, part, mask=cols < 7)
    tl.store(Y + 8 + cols, tl.load(X + cols))


def _probe_mul(X, W, Y):
    cols = tl.arange(0, 8)
    tl.store(Y + cols, tl.load(X + cols) * tl.load(W + cols))


def _probe_add(X, W, Y):
    cols = tl.arange(0, 8)
    tl.store(Y + cols, tl.load(X + cols) + tl.load(W + cols))


def _probe_sum(X, Y):
    cols = tl.arange(0, 8)
    tl.store(Y, tl.sum(tl.load(X + cols), axis=0))


def _probe_casts(X, X32, Y, Y32):
    """Y32 = X as float32; Y = X32 rounded to Y's dtype."""
    cols = tl.arange(0, 8)
    tl.store(Y32 + cols, tl.load(X + cols).to(tl.float32))
    tl.store(Y + cols, tl.load(X32 + cols).to(Y.dtype.element_ty))


def _probe_roots(X, Y, N):
    cols = tl.arange(0, 8)
    x = tl.load(X + cols)
    tl.store(Y + cols, tl.sqrt(x))
    tl.store(Y + 8 + cols, tl.rsqrt(x))
    tl.store(Y + 16 + cols, x / N)


def _probe_rows(X, Y, stride_x, stride_y):
    """Two programs, one row each, at int64 row offsets."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, 4)
    tl.store(Y + row * stride_y + cols, tl.load(X + row * stride_x + cols))


# Exact in float16 and bfloat16, and so are their sums and products below.
PROBE_X = (0.5, -1.0, 1.5, 2.0, -2.5, 3.0, 0.75, 4.0)
PROBE_W = (1.5, 2.0, -0.5, 1.25, 3.0, -1.0, 2.0, 0.5)
PROBE_ROUNDED = (1 / 3, -2 / 3, 0.1, 1e-3, 300.7, -7.01, 1 + 2**-9, 65.3)  # rounded by a cast


def _probe_cases(device: torch.device) -> list[tuple[str, torch.dtype, object]]:
    """(what it proves, the dtype it is about, run) for each probe case; run() launches its
    kernel and returns (got, expected) as float64 tensors."""
    f32 = torch.float32

    def tensor(values, dtype):
        return torch.tensor(values, dtype=dtype, device=device)

    def copy(dtype):
        x, y = tensor(PROBE_X, dtype), torch.full((16,), 7.0, dtype=dtype, device=device)
        triton.jit(_probe_copy)[(1,)](x, y)
        return y, torch.cat([x[:6], tensor([-1.5, 7.0], dtype), x])

    def binary(kernel, op, dtype, w_dtype):
        x, w = tensor(PROBE_X, dtype), tensor(PROBE_W, w_dtype)
        y = torch.empty(8, dtype=torch.promote_types(dtype, w_dtype), device=device)
        triton.jit(kernel)[(1,)](x, w, y)
        return y, op(x.double(), w.double())

    def total(dtype):
        x, y = tensor(PROBE_X, dtype), torch.empty(1, dtype=dtype, device=device)
        triton.jit(_probe_sum)[(1,)](x, y)
        return y, x.double().sum().reshape(1)

    def casts(dtype):
        x, x32 = tensor(PROBE_X, dtype), tensor(PROBE_ROUNDED, f32)
        y, y32 = torch.empty(8, dtype=dtype, device=device), torch.empty(8, device=device)
        triton.jit(_probe_casts)[(1,)](x, x32, y, y32)
        return torch.cat([y32.double(), y.double()]), torch.cat(
            [x.double(), x32.to(dtype).double()]
        )

    def roots():
        x = tensor((0.25, 1.0, 4.0, 16.0, 2.25, 0.0625, 9.0, 6.25), f32)
        y = torch.empty(24, device=device)
        triton.jit(_probe_roots)[(1,)](x, y, 4)
        x = x.double()
        return y, torch.cat([x.sqrt(), x.rsqrt(), x / 4])

    def rows():
        x = torch.arange(16.0, device=device).reshape(2, 8)
        y = torch.empty(2, 4, device=device)
        triton.jit(_probe_rows)[(2,)](x, y, x.stride(0), y.stride(0))
        return y, x[:, :4]

    cases = []
    for dtype in (f32, *HALF):
        name = dtype_name(dtype)
        cases += [
            (f"{name} loads and stores, masked and not", dtype, lambda d=dtype: copy(d)),
            (f"{name} × {name}", dtype, lambda d=dtype: binary(_probe_mul, torch.mul, d, d)),
            (f"{name} + {name}", dtype, lambda d=dtype: binary(_probe_add, torch.add, d, d)),
            (f"tl.sum of {name}", dtype, lambda d=dtype: total(d)),
        ]
        if dtype != f32:
            cases += [
                (f"{name} ↔ float32 casts", dtype, lambda d=dtype: casts(d)),
                (f"{name} × float32", dtype, lambda d=dtype: binary(_probe_mul, torch.mul, d, f32)),
            ]
    return [
        *cases,
        ("float32 sqrt, rsqrt and division", f32, roots),
        ("one program per row, at int64 row offsets", f32, rows),
    ]


@dataclass(frozen=True)
class Fault:
    """An operation the installed engine computes wrongly, found by the probe."""

    what: str  # the probe case, e.g. "bfloat16 × bfloat16"
    detail: str  # what it computed instead
    dtype: torch.dtype  # the dtype it is about
    ops: frozenset  # interpreter operations only the failing case ran (interpreted only)

    def affects(self, ops: frozenset, dtypes: set[torch.dtype]) -> bool:
        """Whether a call that ran these interpreter operations, on tensors of these dtypes,
        may have computed with it. Without the operations (compiled: they cannot be seen), any
        call in its dtype."""
        return bool(ops & self.ops) if self.ops else self.dtype in dtypes


FAULTS: list[Fault] = []  # what the probe found wrong with the engine grading here


def blamed(ops: frozenset, dtypes: set[torch.dtype]) -> Fault | None:
    """The fault a call may have met, named for an operation the call itself ran: bfloat16 ×
    and + share the interpreter's binary_op, so the one whose own create_fmul or create_fadd
    ran is named, never the other."""
    hits = [f for f in FAULTS if f.affects(ops, dtypes)]
    for fault in hits:
        shared = frozenset().union(*(f.ops for f in FAULTS if f is not fault))
        if (fault.ops - shared) & ops:
            return fault
    return hits[0] if hits else None


def _engine_name(device: torch.device) -> str:
    return (
        f"Triton {triton.__version__}'s interpreter"
        if INTERPRETED
        else f"Triton {triton.__version__} on {device}"
    )


def _probe(device: torch.device) -> str | None:
    """Run every probe case: why Triton cannot grade here (a float32 case is wrong), or None,
    with the half-precision cases it gets wrong in FAULTS."""
    where = _engine_name(device)
    proven: set = set()
    failed: list[tuple[str, torch.dtype, str, frozenset]] = []
    FAULTS.clear()
    _Ops.wanted = None  # the probe compares every operation its cases ran
    for what, dtype, case in _probe_cases(device):
        with _recording_ops() as ops:
            try:
                got, want = case()
            except Exception as e:
                first = (str(e).strip().splitlines() or [""])[0]
                detail = f"raised {type(e).__name__}: {first[:200]}"
            else:
                got, want = got.double().cpu(), want.double().cpu()
                rtol = 1e-5 if dtype == torch.float32 else 1e-2
                if torch.allclose(got, want, rtol=rtol, atol=1e-6):
                    proven |= ops
                    continue
                detail = f"computed {_short(got)} instead of {_short(want)}"
        if dtype == torch.float32:
            message = (
                f"{where} got a test kernel wrong ({what}: it {detail}), so no kernel can be "
                "graded with it."
            )
            if (
                INTERPRETED
                and _version(triton.__version__) < (3, 2)
                and _version(np.__version__) >= (2, 0)
            ):
                message += (
                    f" Triton 3.0 and 3.1's interpreter does not work with numpy 2 (this Python "
                    f"has numpy {np.__version__}): install numpy<2 (pip install 'numpy<2') or "
                    "Triton 3.2 or later, then grade again."
                )
            return message
        failed.append((what, dtype, detail, frozenset(ops)))
    # Blame only what a failing case ran and no passing case did: the broken operation itself,
    # not the loads and stores around it.
    FAULTS.extend(Fault(what, detail, d, ops - proven) for what, d, detail, ops in failed)
    _Ops.wanted = frozenset(op[0] for fault in FAULTS for op in fault.ops)
    return None


def _short(t: torch.Tensor) -> str:
    return "[" + ", ".join(f"{v:.4g}" for v in t.flatten().tolist()[:8]) + "]"


def _fault_note(fault: Fault, device: torch.device) -> str:
    elsewhere = (
        "Grade with --device cuda on an NVIDIA GPU, where Triton compiles the kernel (or with a "
        "Triton whose interpreter gets it right)."
        if INTERPRETED
        else "Grade on the CPU too, in Triton's interpreter, or with another Triton."
    )
    return (
        f"{_engine_name(device)} gets {fault.what} wrong (its test kernel {fault.detail}), and "
        "your kernel does that here, so the grader cannot tell whether its values are right. "
        + elsewhere
    )


# -- starting the engine ----------------------------------------------------------------------


# Whether the engine was proven in this process (or in the parent it was forked from), by
# mode (interpreted?): the problem found, or None when it can grade. The probe's verdict
# depends on the installed engine alone, so a long-lived parent proves it once (`prepare`).
_PROVEN: dict[bool, str | None] = {}


def start(device: torch.device) -> None:
    """Import Triton, compiled on a GPU and interpreted elsewhere, and prove it; or stop the
    grading with cannot_grade (the grader's failure, never the learner's).

    Call it from a module-scoped autouse fixture, so that it runs before the `kata` fixture
    imports the learner's file.
    """
    interpreted = device.type != "cuda"
    if interpreted not in _PROVEN:
        try:
            _PROVEN[interpreted] = _start(device)
        except Exception as e:  # before the learner's file loads: the engine's or the grader's
            first = (str(e).strip().splitlines() or [""])[0][:200]
            _PROVEN[interpreted] = f"setting up Triton raised {type(e).__name__}: {first}"
    if problem := _PROVEN[interpreted]:
        cannot_grade(problem)


def prepare(device: torch.device) -> None:
    """Prove the engine once in a long-lived parent (watch mode, a mock), so that each grading
    forked from it skips the probe: on the CPU only, since on a GPU the probe's tensors would
    initialise the device, which a parent must not do. A failure is the grading's to report."""
    if device.type == "cpu":
        with suppress(Exception):
            start(device)


def _start(device: torch.device) -> str | None:
    """start's work: why Triton cannot grade here, or None once it is imported and proven."""
    global triton, tl, INTERPRETED
    INTERPRETED = device.type != "cuda"
    if INTERPRETED:
        os.environ["TRITON_INTERPRET"] = "1"
    else:
        os.environ.pop("TRITON_INTERPRET", None)  # graded compiled, as it runs in production
    try:
        import triton
        import triton.language as tl
    except Exception as e:  # an ImportError, or a broken install
        return (
            f"This kata needs Triton (triton>=3.0), which is not installed for this Python "
            f"({sys.executable}; importing it raised {type(e).__name__}: {e}). Install it with "
            "pip install 'triton>=3.0' (Linux; no GPU needed: without one the grader runs your "
            "kernel in Triton's interpreter), then grade again."
        )
    if _version(triton.__version__) < (3, 0):
        return f"This kata needs Triton 3.0 or later; this Python has {triton.__version__}."
    if problem := _library_mode_problem():
        return problem
    if INTERPRETED:
        _index_loop_bounds()
        _grids_as_tuples()
        _floats_as_float32()
        _no_unread_overflow_checks()
        _numpy_dtypes_remembered()
        _scan_builtins_once()
        _patch_lang_once()
        _watch_interpreter()
        _autotune_untimed()
        _interpret_libdevice()
    return _probe(device)


def _autotune_untimed() -> None:
    """Let @triton.autotune choose among several configs in the interpreter.

    With more than one config the autotuner times each with its benchmarker, which needs a GPU
    driver ("0 active drivers"): a correct autotuned kernel failed every check on the CPU.
    Interpreted, each config's launch runs once, every access audited as in any launch, and
    all time the same, so the first config is kept, as on a GPU the fastest would be.
    Triton 3.0 times with the autotuner module's do_bench; later releases ask the
    Autotuner's do_bench property (a cached one in 3.9) for one.
    """
    from triton.runtime import autotuner

    def once(kernel_call, *args, quantiles=None, **kwargs):
        kernel_call()
        return [1.0] * len(quantiles) if quantiles else 1.0

    for name in ("do_bench", "do_bench_cudagraph"):
        if callable(getattr(autotuner, name, None)):
            setattr(autotuner, name, once)
    if isinstance(autotuner.Autotuner.__dict__.get("do_bench"), property | cached_property):
        autotuner.Autotuner.do_bench = property(lambda self: once)


# libdevice functions that triton.language has under the same name: forwarded there when
# interpreted. libdevice's own are extern calls into CUDA's library, which the interpreter
# cannot make (Triton 3.9's module of stubs even returns None).
_LIBDEVICE_AS_TL = {
    "rsqrt": "rsqrt", "rsqrt_rn": "rsqrt", "sqrt": "sqrt", "sqrt_rn": "sqrt_rn", "exp": "exp",
    "exp2": "exp2", "log": "log", "log2": "log2", "sin": "sin", "cos": "cos", "fabs": "abs",
    "floor": "floor", "ceil": "ceil", "erf": "erf", "fma": "fma", "div_rn": "div_rn",
    "fmax": "maximum", "fmin": "minimum",
}  # fmt: skip
LACKING: list[str] = []  # the libdevice functions a call used that the interpreter lacks


def _interpret_libdevice() -> None:
    """Run triton.language.extra.libdevice in the interpreter: a kernel after Liger-Kernel's
    RMSNorm (libdevice.rsqrt) failed every check on the CPU. Functions that triton.language
    also has are forwarded to it; any other is recorded in LACKING when called, so that the
    grading says the engine cannot run it, never that the learner's code is wrong."""
    import importlib

    def forward_to(name: str, tl_name: str):
        def call(*args, **kwargs):
            kwargs.pop("_builder", None), kwargs.pop("_semantic", None)
            return getattr(tl, tl_name)(*args, **kwargs)

        call.__name__, call.__module__ = name, __name__
        return call

    def lacking(name: str):
        def call(*args, **kwargs):
            LACKING.append(name)
            raise NotImplementedError(f"Triton's interpreter cannot run libdevice.{name}")

        call.__name__, call.__module__ = name, __name__
        return call

    for module_name in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice"):
        try:
            module = importlib.import_module(module_name)
        except Exception:  # not in this release
            continue
        for name, member in list(vars(module).items()):
            if not inspect.isfunction(member) or member.__module__ != module_name:
                continue  # what the module imports, or one forwarded already
            tl_name = _LIBDEVICE_AS_TL.get(name)
            setattr(module, name, forward_to(name, tl_name) if tl_name else lacking(name))


def _lacking_message(name: str, device: torch.device) -> str:
    return (
        f"{_engine_name(device)} cannot run libdevice.{name}, which your kernel calls (it calls "
        "into CUDA's own math library), so the grader cannot tell whether the kernel is right. "
        "Use triton.language's own function where it has one (tl.rsqrt, tl.sqrt, tl.exp, ...), "
        "or grade with --device cuda on an NVIDIA GPU, where Triton compiles the kernel."
    )


def _index_loop_bounds() -> None:
    """Let interpreted kernels loop over `range(0, N, BLOCK)` with numpy 2.4 or later.

    Before Triton 3.8 the interpreter turned a scalar argument such as N into a Python int with
    int() of a one-element array, which numpy 2.4 refuses ("only 0-dimensional arrays can be
    converted to Python scalars"), so the row loop of Triton's own LayerNorm tutorial failed.
    Triton 3.8 takes the element out first; do the same for older releases.
    """
    from triton.runtime import interpreter

    patch_tensor = interpreter._patch_lang_tensor

    def patch_tensor_and_index(tensor, *args, **kwargs):
        patch_tensor(tensor, *args, **kwargs)
        tensor.__index__ = lambda self: int(self.handle.data.item())

    interpreter._patch_lang_tensor = patch_tensor_and_index


def _grids_as_tuples() -> None:
    """A launch grid given as a list works on a GPU: the compiled launch takes only its length
    and items (kernel[[n]], or a grid lambda returning [n], as Triton's layer-norm tutorial and
    Liger-Kernel write it). The interpreter pads it with `grid + (1,) * ...`, a TypeError for a
    list, raised at the learner's launch line: a verdict of the interpreter's, not of their
    code. Lists are made tuples before it sees them."""
    from triton.runtime.interpreter import GridExecutor

    init = GridExecutor.__init__
    if getattr(init, "norm_katas_tuples", False):
        return

    def as_tuple(grid):
        return tuple(grid) if isinstance(grid, list) else grid

    def __init__(self, fn, arg_names, grid, *rest, **kwargs):
        if callable(grid):
            computes = grid

            def grid(meta):
                return as_tuple(computes(meta))

        init(self, fn, arg_names, as_tuple(grid), *rest, **kwargs)

    __init__.norm_katas_tuples = True
    GridExecutor.__init__ = __init__


def _floats_as_float32() -> None:
    """Hand interpreted kernels a float argument (eps) as Triton's compiler does: a float32
    scalar, not a Python float.

    Compiled, `eps` is a float32 value of the kernel: `eps.to(tl.float32)` (Liger-Kernel's
    RMSNorm kernels) works, and `x * eps` on float16 x computes in float32. The interpreter
    in every release from 3.0 passes the Python float through, so the first raised
    AttributeError ("'float' object has no attribute 'to'") and the second rounded to float16:
    the learner would be graded on what the interpreter does, not on what the GPU does.
    """
    from triton.runtime import interpreter

    convert = interpreter._implicit_cvt
    if getattr(convert, "norm_katas_floats", False):
        return

    def implicit_cvt(arg):
        if type(arg) is float:  # not a bool, an int or a numpy scalar: those go as before
            handle = interpreter.TensorHandle(np.array([arg], dtype=np.float32), tl.float32)
            return tl.tensor(handle, tl.float32)
        return convert(arg)

    implicit_cvt.norm_katas_floats = True
    interpreter._implicit_cvt = implicit_cvt


def _no_unread_overflow_checks() -> None:
    """Spare the interpreter the integer-overflow checks whose verdict nobody reads.

    From Triton 3.2 every int32 add, sub and mul of a kernel (offsets, masks) also computes the
    result in int64 and compares it with int32's bounds, for a device_assert that only debug
    mode keeps: without it the result is thrown away. Interpreted, that is about a sixth of a
    Triton kata's grading. Compiled without debug, Triton leaves the checks out; so does the
    interpreter now, with the same values (its options never turn debug on; if they did, the
    checks would stay).
    """
    import dataclasses

    from triton.runtime import interpreter

    builder = getattr(interpreter, "interpreter_builder", None)
    options = getattr(builder, "options", None)
    if getattr(options, "sanitize_overflow", False) and not getattr(options, "debug", True):
        builder.options = dataclasses.replace(options, sanitize_overflow=False)


def _numpy_dtypes_remembered() -> None:
    """The interpreter's numpy dtype for each Triton dtype, looked up once.

    Every interpreted operation asks for it, and Triton (3.0 to 3.9) builds its whole table of
    dtypes again each time: a twentieth of a Triton kata's grading. The answer depends on the
    dtype alone (dtypes compare by value), so it is kept; an unknown dtype raises as before.
    """
    from triton.runtime import interpreter

    lookup = interpreter._get_np_dtype
    if getattr(lookup, "norm_katas_remembered", False):
        return
    known: dict = {}

    def get_np_dtype(tt_dtype):
        try:
            return known[tt_dtype]
        except KeyError:
            known[tt_dtype] = found = lookup(tt_dtype)
            return found
        except TypeError:  # not hashable: ask Triton every time
            return lookup(tt_dtype)

    get_np_dtype.norm_katas_remembered = True
    interpreter._get_np_dtype = get_np_dtype


def _library_mode_problem() -> str | None:
    """Reconcile Triton's library kernels with the mode chosen, if triton.language was imported
    before (torch._dynamo imports it): or say why grading cannot go on."""
    from triton.runtime.jit import JITFunction

    built_for = "compiled" if isinstance(tl.standard.sum, JITFunction) else "interpreted"
    if built_for == "interpreted" and not INTERPRETED:
        return (
            "TRITON_INTERPRET=1 was set when Triton was imported, so it runs every kernel in its "
            "interpreter. Unset it to grade on the GPU (the grader turns the interpreter on by "
            "itself when it grades on the CPU)."
        )
    if built_for == "compiled" and INTERPRETED:
        # A call to tl.sum (a JITFunction) from an interpreted kernel would raise "Cannot call
        # @triton.jit'd outside of the scope of a kernel": run such calls through the
        # interpreter, as they would have run had the interpreter been on at import.
        from triton.runtime.interpreter import InterpretedFunction

        interpreted: dict[int, object] = {}

        def call(self, *args, **kwargs):
            if id(self) not in interpreted:
                interpreted[id(self)] = InterpretedFunction(self.fn)
            return interpreted[id(self)](*args, **kwargs)

        JITFunction.__call__ = call
    return None


def _scan_builtins_once() -> None:
    """Patch the same attributes as the interpreter, without listing whole modules each time.

    Before every launch, and before every call of a jit function from a kernel (each tl.sum,
    tl.max, ...), the interpreter lists every member of triton.language, its tensor class and
    tl.math with inspect.getmembers, to wrap those that are Triton builtins. That listing was a
    third of grading an interpreted kernel. The builtins among a module's members are the same
    every time: list them once, while nothing is patched, then patch exactly those that are
    still builtins, as the interpreter would.
    """
    from triton.runtime import interpreter

    patch_builtin = interpreter._patch_builtin
    if getattr(patch_builtin, "norm_katas_scanned", False):
        return
    names: dict[int, tuple[str, ...]] = {}

    def builtins(pkg) -> tuple[str, ...]:
        if id(pkg) not in names:
            names[id(pkg)] = tuple(n for n, m in inspect.getmembers(pkg) if tl.core.is_builtin(m))
        return names[id(pkg)]

    def scan_once(pkg, *args, **kwargs):
        for name in builtins(pkg):
            member = getattr(pkg, name)
            if tl.core.is_builtin(member):
                interpreter._patch_attr(pkg, name, member, *args, **kwargs)

    # Listed now, before any kernel ran in this process: nothing is patched yet.
    for pkg in (tl, tl.core, tl.tensor, tl.math, getattr(tl.core, "tensor_descriptor_base", None)):
        if pkg is not None:
            builtins(pkg)
    scan_once.norm_katas_scanned = True
    interpreter._patch_builtin = scan_once


class _SkippedScope:
    """What a patching of triton.language already in effect returns: nothing to undo."""

    def restore(self) -> None:
        pass


def _patch_lang_once() -> None:
    """Patch triton.language once per launch, not again at every jit call inside the kernel.

    Each call of a jit function from an interpreted kernel (tl.sum, tl.max, ...) patches the
    language modules in its globals again, as the launch did: a sixth of grading a kernel
    that reduces in a loop. Within a launch, a patching of modules that this launch has
    patched already is skipped. A launch begins with nothing taken as patched, and a scope
    that is restored (Triton 3.2 on) takes its modules back out.
    """
    from triton.runtime import interpreter

    patch_lang, executor = interpreter._patch_lang, interpreter.GridExecutor
    if getattr(patch_lang, "norm_katas_once", False):
        return
    # The ids of the modules that the running launch has patched; None between launches.
    launch: list[set[int] | None] = [None]

    class _Scope:
        def __init__(self, scope, mine: set[int]) -> None:
            self.scope, self.mine = scope, mine

        def restore(self) -> None:
            if launch[0] is not None:
                launch[0].difference_update(self.mine)
            self.scope.restore()

    def once(fn):
        patched = launch[0]
        if patched is None:  # outside a launch: as Triton does
            return patch_lang(fn)
        langs = {id(v) for v in fn.__globals__.values() if v is tl or v is tl.core}
        if langs and langs <= patched:
            return _SkippedScope()
        scope = patch_lang(fn)
        mine = langs - patched
        patched.update(mine)
        return scope if scope is None else _Scope(scope, mine)

    run = executor.__call__

    def launched(self, *args, **kwargs):
        launch[0] = set()
        try:
            return run(self, *args, **kwargs)
        finally:
            launch[0] = None

    once.norm_katas_once = True
    interpreter._patch_lang = once
    executor.__call__ = launched


# -- watching the interpreter: the operations a kernel runs, the memory it touches -----------
#
# Interpreted only. The interpreter runs a kernel's operations as methods of one builder
# object (create_fmul, binary_op, ...) and its memory accesses through one extension module
# (_interpreter.load, .store, atomics), in every release from 3.0 on: both are wrapped once.


class _Ops:
    seen: set | None = None  # (operation, operand types) run since recording began
    # The operations worth recording: after the probe, only those of a fault it found (what
    # blamed() compares with), the rest being tens of thousands per grading; None: every one.
    wanted: frozenset[str] | None = None


@contextmanager
def _recording_ops():
    """The interpreter operations run inside the block, as a set of (name, *operand types)."""
    _Ops.seen = seen = set()
    try:
        yield seen
    finally:
        _Ops.seen = None


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


def _operand_types(args, tensors: tuple[type, ...]) -> tuple[str, ...]:
    """The scalar type of each operand that has one: `tensors` are the interpreter's tensor
    classes (its TensorHandle and tl.tensor), looked up once, as this runs at every operation."""
    types = []
    for a in args:
        if isinstance(a, tensors):
            types.append(_scalar_name(a.dtype))
        elif isinstance(a, tl.dtype):
            types.append(_scalar_name(a))
    return tuple(types)


def _recorded(name: str, method):
    from triton.runtime.interpreter import TensorHandle

    tensors = (TensorHandle, tl.tensor)

    def record(*args, **kwargs):
        if _Ops.seen is not None and (_Ops.wanted is None or name in _Ops.wanted):
            _Ops.seen.add((name, *_operand_types(args, tensors)))
        return method(*args, **kwargs)

    record.norm_katas_recorded = True
    return record


def _watch_interpreter() -> None:
    """Wrap the interpreter's builder (each operation recorded with its operand types), its
    sum reduction (numpy's, beside the builder) and its memory accesses (audited)."""
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
    if not isinstance(interpreter._interpreter, _AuditedMemory):
        interpreter._interpreter = _AuditedMemory(interpreter._interpreter)
    load = getattr(builder, "create_masked_load", None)
    if callable(load) and not getattr(load, "norm_katas_poisoned", False):
        builder.create_masked_load = _poisoned(load)


def _poisoned(load):
    """A masked load without `other` leaves its masked lanes undefined (Triton's docs): the
    interpreter reads zeros there, which a kernel that sums them would get away with. They
    read NaN here instead (floats only), so that relying on them shows in the output."""
    from triton.runtime import interpreter

    def poisoned(ptrs, mask, other, *rest):
        if other is None:
            try:
                dtype = interpreter._get_np_dtype(ptrs.get_element_ty())
                if np.issubdtype(dtype, np.floating):
                    _Audit.undefined += not np.all(mask.data)
                    nan = np.full(np.shape(ptrs.data), np.nan, dtype=dtype)
                    other = interpreter.TensorHandle(nan, ptrs.get_element_ty())
            except (AttributeError, TypeError):  # another Triton's internals: zeros, as before
                pass
        return load(ptrs, mask, other, *rest)

    poisoned.norm_katas_poisoned = True
    poisoned.norm_katas_recorded = True
    return poisoned


@dataclass
class _Region:
    start: int  # bytes
    end: int
    name: str  # "x", "the weight", ...
    elements: int
    params: list[str] = field(default_factory=list)  # the kernel arguments that point into it


@dataclass
class _Stray:
    verb: str  # "read" or "wrote"
    address: int  # the first address outside every region
    itemsize: int
    addresses: np.ndarray  # every address outside every region in this access, once each
    program: tuple
    regions: list  # the launch's regions, to say where the address is
    kernel: str  # the launched kernel's name, "" where it has none


class _Audit:
    """While a call is audited: the regions each launch may touch (its tensor arguments'
    elements, from first to last), and every access outside them."""

    known: dict[int, _Region] | None = None  # storage address -> what the grader made there
    regions: list[_Region] | None = None  # those of the running launch
    kernel = ""  # the running launch's kernel, by name
    strays: ClassVar[list[_Stray]] = []
    races: "_Races | None" = None  # the running call's, where the suite asks for them
    # The programs of each launch that run, by their first grid index; None: every one.
    sample: frozenset[int] | None = None
    # Masked loads without `other` that left lanes undefined (read NaN here) in this call.
    undefined = 0

    @classmethod
    def allowed(cls, verb: str, ptrs, mask, itemsize: int):
        """The mask with every lane outside the regions turned off, each such lane recorded:
        the access goes on safely (never outside memory the grader knows) and is reported."""
        if cls.regions is None:
            return mask
        ptrs = np.asarray(ptrs, dtype=np.uint64)
        active = np.broadcast_to(np.asarray(mask, dtype=bool), ptrs.shape)
        inside = np.zeros(ptrs.shape, dtype=bool)
        for r in cls.regions:
            inside |= (ptrs >= r.start) & (ptrs + np.uint64(itemsize) <= r.end)
        stray = active & ~inside
        if not stray.any():
            return mask
        from triton.runtime.interpreter import interpreter_builder

        program = tuple(getattr(interpreter_builder, "grid_idx", None) or ())
        first = int(ptrs[stray].flat[0])
        outside = np.unique(ptrs[stray])
        cls.strays.append(_Stray(verb, first, itemsize, outside, program, cls.regions, cls.kernel))
        return np.ascontiguousarray(active & inside)

    @classmethod
    def record(cls, kind: int, ptrs, mask) -> None:
        """An access by the running program, for the race analysis (if one is asked for)."""
        if cls.races is not None and cls.regions is not None:
            cls.races.record(kind, ptrs, mask)

    @classmethod
    def launch(cls, arg_names, args, kwargs, kernel: str = "the kernel") -> None:
        """A launch begins: its regions, one per storage its tensor arguments point into."""
        if cls.known is None:
            return
        if cls.races is not None:
            cls.races.begin(kernel)
        cls.kernel = kernel
        named = [*zip(arg_names, args, strict=False), *kwargs.items()]
        regions: dict[int, _Region] = {}
        while named:
            name, value = named.pop(0)
            if isinstance(value, tuple):  # a tuple of tensors (newer Triton)
                named += [(f"{name}[{i}]", v) for i, v in enumerate(value)]
                continue
            value = getattr(value, "base", value)  # triton.reinterpret, a TensorDescriptor
            if not isinstance(value, torch.Tensor):
                continue
            storage = value.untyped_storage()
            base = storage.data_ptr()
            if base not in regions:
                regions[base] = cls.known.get(base) or _Region(
                    base, base + storage.nbytes(), f"a {shape_of(value)} tensor",
                    storage.nbytes() // max(value.element_size(), 1),
                )  # fmt: skip
                regions[base].params = []
            regions[base].params.append(name)
        cls.regions = list(regions.values())


class _AuditedMemory:
    """The interpreter's memory module, every access checked by _Audit while a call is audited."""

    def __init__(self, real) -> None:
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def load(self, ptrs, mask, other, dtype, *rest):
        mask = _Audit.allowed("read", ptrs, mask, np.dtype(dtype).itemsize)
        _Audit.record(_Races.LOAD, ptrs, mask)
        return self._real.load(ptrs, mask, other, dtype, *rest)

    def store(self, ptrs, values, mask, *rest):
        mask = _Audit.allowed("wrote", ptrs, mask, np.asarray(values).dtype.itemsize)
        _Audit.record(_Races.STORE, ptrs, mask)
        return self._real.store(ptrs, values, mask, *rest)

    def atomic_rmw(self, op, ptrs, values, mask, *rest):
        mask = _Audit.allowed("wrote", ptrs, mask, np.asarray(values).dtype.itemsize)
        _Audit.record(_Races.ATOMIC, ptrs, mask)
        if _Audit.races is not None:
            _Audit.races.released(ptrs, mask)
        return self._real.atomic_rmw(op, ptrs, values, mask, *rest)

    def atomic_cas(self, ptrs, cmp, values, *rest):
        everywhere = np.ones(np.shape(ptrs), dtype=bool)
        if not _Audit.allowed("wrote", ptrs, everywhere, np.asarray(values).dtype.itemsize).all():
            raise RuntimeError("atomic_cas outside the kernel's tensors (see the grader's report)")
        _Audit.record(_Races.ATOMIC, ptrs, everywhere)
        old = self._real.atomic_cas(ptrs, cmp, values, *rest)
        if _Audit.races is not None:
            _Audit.races.compared(ptrs, cmp, values, old)
        return old


def _program() -> tuple:
    from triton.runtime.interpreter import interpreter_builder

    return tuple(getattr(interpreter_builder, "grid_idx", None) or ())


class _Races:
    """Which program touched which address in one launch, to find the data races that the
    interpreter cannot show in values: it runs programs one after another, so a plain load, add
    and store into an element that several programs share comes out right there, while on a GPU
    the programs run at the same time and updates are lost.

    A race: two programs of one launch touch an element, at least one with a plain store (or
    one with a plain load and another with an atomic), and not all of those accesses are made
    holding the same lock. A lock is what Triton's LayerNorm tutorial uses: an element a
    program sets with a successful tl.atomic_cas (a spin lock) and clears with an atomic
    exchange; the accesses between are protected by it. Atomics among themselves never race.
    """

    LOAD, STORE, ATOMIC = 0, 1, 2
    SPINS = 1000  # failed atomic_cas in a row on one element: in the interpreter, a deadlock

    def __init__(self) -> None:
        self.found: list[str] = []  # what each race or deadlock was, for the learner
        self.kernel = "the kernel"
        self.chunks: list[tuple[np.ndarray, int, int, int]] = []  # addresses, program, kind, lock
        self.programs: dict[tuple, int] = {}
        self.held: dict[int, list[int]] = {}  # program -> the lock elements it holds
        self.spins: dict[tuple[int, int], int] = {}

    def begin(self, kernel: str) -> None:
        self.finish()
        self.kernel = kernel
        self.chunks, self.programs, self.held, self.spins = [], {}, {}, {}

    def _current(self) -> int:
        return self.programs.setdefault(_program(), len(self.programs))

    def record(self, kind: int, ptrs, mask) -> None:
        ptrs = np.asarray(ptrs, dtype=np.uint64)
        active = np.broadcast_to(np.asarray(mask, dtype=bool), ptrs.shape)
        program = self._current()
        locks = self.held.get(program)
        self.chunks.append((ptrs[active].ravel(), program, kind, locks[-1] if locks else 0))

    def compared(self, ptrs, cmp, values, old) -> None:
        """After an atomic_cas: a success that changed the element takes a lock on it."""
        program = self._current()
        ptrs, cmp, values, old = (np.ravel(np.asarray(a)) for a in (ptrs, cmp, values, old))
        for address, c, v, o in zip(
            ptrs.tolist(), *np.broadcast_arrays(cmp, values, old), strict=False
        ):
            if o == c and v != c:
                self.held.setdefault(program, []).append(int(address))
                self.spins.pop((program, int(address)), None)
            elif o != c:
                spun = self.spins.get((program, int(address)), 0) + 1
                self.spins[(program, int(address))] = spun
                if spun >= self.SPINS:
                    self.found.append(
                        f"in {self.kernel}, program {self._name(program)} spun {spun} times on "
                        "a tl.atomic_cas that never succeeds: the lock it waits for is held by a "
                        "program that has finished without releasing it (the interpreter runs "
                        "programs one after another), which on a GPU is a deadlock"
                    )
                    raise RuntimeError("deadlock (see the grader's report)")

    def released(self, ptrs, mask) -> None:
        """After an atomic read-modify-write: on a lock the program holds, it lets go of it."""
        program = self._current()
        locks = self.held.get(program)
        if not locks:
            return
        ptrs = np.asarray(ptrs, dtype=np.uint64)
        active = np.broadcast_to(np.asarray(mask, dtype=bool), ptrs.shape)
        for address in ptrs[active].ravel().tolist():
            if address in locks:
                locks.remove(address)

    def _name(self, program: int) -> str:
        index = next(k for k, v in self.programs.items() if v == program)
        return str(index[0]) if len(index) and not any(index[1:]) else str(index)

    @staticmethod
    def _first(addresses: list[int]) -> int:
        """The race to report: the first element of the first tensor, in the kernel's order of
        arguments, not the lowest address, which depends on where the allocator put each
        tensor and would name another tensor from run to run."""
        regions = list(_Audit.regions or ())

        def key(address: int) -> tuple[int, int]:
            for i, r in enumerate(regions):
                if r.start <= address < r.end:
                    return i, address - r.start
            return len(regions), address

        return int(min(addresses, key=key))

    def finish(self) -> None:
        """The launch is over: find its first race, if any."""
        chunks, self.chunks = self.chunks, []
        if not chunks or self.found:
            return
        sizes = [len(a) for a, *_ in chunks]
        addresses = np.concatenate([a for a, *_ in chunks])
        if not len(addresses):
            return

        def spread(i: int) -> np.ndarray:
            return np.repeat(np.array([c[i] for c in chunks], dtype=np.int64), sizes)

        program, kind, lock = spread(1), spread(2), spread(3)
        unique, where = np.unique(addresses, return_inverse=True)
        n = len(unique)

        def per_element(ufunc, values, start):
            out = np.full(n, start, dtype=np.int64)
            ufunc.at(out, where, values)
            return out

        shared = per_element(np.minimum, program, 2**62) != per_element(np.maximum, program, -1)
        stored = per_element(np.maximum, (kind == self.STORE).astype(np.int64), 0) > 0
        loaded = per_element(np.maximum, (kind == self.LOAD).astype(np.int64), 0) > 0
        atomic = per_element(np.maximum, (kind == self.ATOMIC).astype(np.int64), 0) > 0
        lowest = per_element(np.minimum, lock, 2**62)
        unlocked = (lowest == 0) | (lowest != per_element(np.maximum, lock, -1))
        racy = shared & (stored | (loaded & atomic)) & unlocked
        if not racy.any():
            return
        address = self._first(unique[racy.nonzero()[0]].tolist())
        involved = where == np.searchsorted(unique, address)
        verbs: dict[int, set[str]] = {}
        for p, k in zip(program[involved].tolist(), kind[involved].tolist(), strict=True):
            verbs.setdefault(p, set()).add(("read", "wrote", "atomically updated")[k])
        two = list(verbs)[:2]
        said = " and ".join(
            f"program {self._name(p)} {' and '.join(sorted(verbs[p], reverse=True))} it"
            for p in two
        )
        region = next((r for r in _Audit.regions or () if r.start <= address < r.end), None)
        if region is None:
            what = "an element"
        else:
            itemsize = max((region.end - region.start) // max(region.elements, 1), 1)
            what = (
                f"element {(address - region.start) // itemsize} of {region.name} (passed as "
                f"{', '.join(region.params)})"
            )
        self.found.append(
            f"in {self.kernel}, {what} is shared by {len(verbs)} programs with no atomic and "
            f"no lock: {said}. On a GPU they run at the same time, so one program's update can "
            "be lost; the interpreter runs them one after another, which is why the values "
            "here may still come out right"
        )


def _stray_message(given: str, advice: str) -> str:
    """What the first access outside the kernel's tensors was, for the learner."""
    strays = _Audit.strays
    first = strays[0]
    regions = first.regions
    before = [r for r in regions if r.end <= first.address]
    if before:
        r = max(before, key=lambda r: r.end)
        n = (first.address - r.end) // first.itemsize
        where = "right after the end of" if n == 0 else f"{n} elements after the end of"
    else:
        after = [r for r in regions if r.start > first.address]
        r = min(after, key=lambda r: r.start) if after else None
        n = (r.start - first.address) // first.itemsize if r else 0
        where = f"{n} elements before the start of"
    target = f"{r.name} ({r.elements} elements, passed as {', '.join(r.params)})" if r else "?"
    verbs = " and ".join(dict.fromkeys(s.verb for s in strays))
    program = f"program {first.program[0]}" if first.program else "a program"
    # Elements, each once: the same address read in two passes, or read then written, is one.
    total = len(np.unique(np.concatenate([s.addresses for s in strays])))
    # Named, where a call launches several kernels (forward, dx, the sum of partial rows).
    names = [n for n in dict.fromkeys(s.kernel for s in strays) if n and n != "the kernel"]
    kernel, were = (f"the kernel {names[0]}" if names else "the kernel"), "it was"
    if len(names) > 1:
        kernel, were = "the kernels " + " and ".join(names), "they were"
        program += f" of {first.kernel}"
    return (
        f"{given}: {kernel} {verbs} {total} element(s) outside the tensors {were} given, the "
        f"first ({program}) {where} {target}. On a GPU such an access reads garbage or "
        f"crashes, whatever the values there: the grader flags it by address. {advice}"
    )


# -- running the learner's function, fenced and watched ---------------------------------------


def _span(t: torch.Tensor) -> int:
    """Elements from a tensor's first to its last, in its storage (its strides included)."""
    if t.numel() == 0:
        return 0
    return 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride(), strict=True))


def _fenced(t: torch.Tensor, fill: float, fence: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A tensor with t's shape and strides in a storage `fence` elements longer, filled with
    `fill` wherever t has no element; and that whole storage, as a flat tensor."""
    span = _span(t)
    storage = torch.full((span + fence,), fill, dtype=t.dtype, device=t.device)
    out = storage.new_empty(0).set_(storage.untyped_storage(), 0, t.shape, t.stride())
    return out, storage


def _region(t: torch.Tensor, name: str) -> _Region:
    """The bytes of t's elements, first to last: what a kernel given t may touch."""
    start = t.data_ptr()
    return _Region(start, start + _span(t) * t.element_size(), name, _span(t))


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
    return str(Path(triton.__file__).parent) + os.sep


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


class _Watch(DispatchMode):
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
        self.activations = {_storage(x) for x in xs}  # storages of activations, or made from them
        self.work: list[tuple[str, int]] = []  # (ATen op, largest tensor it touched)
        self.allocated: list[tuple[torch.Tensor, torch.Tensor]] = []  # (storage, the tensor)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        if _inside_triton():  # the interpreter copying arguments, the launcher
            return result
        name = func.overloadpacket.__name__
        if name in FACTORIES and isinstance(result, torch.Tensor) and result.is_floating_point():
            out, storage = _fenced(result, SENTINEL, self.fence)
            if not name.startswith(("empty", "new_empty")):
                out.copy_(result)  # zeros, ones, full: keep their values
            self.allocated.append((storage, out))
            self.activations.add(_storage(out))
            if _Audit.known is not None:
                _Audit.known[_storage(out)] = _region(out, f"the {shape_of(out)} tensor allocated")
            return out
        # torch's own ops only: a custom op (torch.library.triton_op) wrapping the kernel is fine.
        if name in self.allowed or getattr(func, "namespace", "aten") != "aten":
            return result
        inputs = [t for t in tree_flatten((args, kwargs))[0] if torch.is_tensor(t)]
        if any(_storage(t) in self.activations for t in inputs):
            outputs = [t for t in tree_flatten(result)[0] if torch.is_tensor(t)]
            self.activations.update(_storage(t) for t in outputs)
            self.work.append((name, max((t.numel() for t in inputs + outputs), default=0)))
        return result


@contextmanager
def _counting_launches(counted: list[int]):
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
            if hasattr(self, "arg_names") and _Audit.known is not None:
                name = getattr(getattr(self, "fn", None), "__name__", "the kernel")
                _Audit.launch(self.arg_names, args, kwargs, kernel=name)
            fn = getattr(self, "fn", None)
            sampled = _Audit.sample is not None and isinstance(self, GridExecutor)
            if sampled:
                self.fn = _only(fn, _Audit.sample)
            try:
                return _original(self, *args, **kwargs)
            finally:
                if sampled:
                    self.fn = fn
                if _Audit.races is not None:
                    _Audit.races.finish()

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
    program = _program

    def run_program(*args, **kwargs):
        if program()[0] in programs:
            return fn(*args, **kwargs)
        return None

    code, cells = run_program.__code__, run_program.__closure__
    only = types.FunctionType(code, fn.__globals__, fn.__name__, None, cells)
    only.__signature__ = inspect.signature(fn)
    return only


def _annotations_trap(kata, error: Exception) -> str | None:
    """Triton 3.0/3.1's interpreter and `from __future__ import annotations` do not mix."""
    if not INTERPRETED or "constexpr" not in str(error):
        return None
    if _version(triton.__version__) >= (3, 2):
        return None
    try:
        source = Path(kata.path).read_text(errors="replace")
    except OSError:
        return None
    if "from __future__ import annotations" not in source:
        return None
    return (
        f"your file has `from __future__ import annotations`, so Triton "
        f"{triton.__version__}'s interpreter reads the annotation tl.constexpr as a string and "
        f"does not treat your block size as a compile-time constant ({type(error).__name__}: "
        f"{str(error).strip()[:120]}). Remove that import: Triton needs the real annotation."
    )


def _work_message(given: str, work: list[tuple[str, int]], oversight: "Oversight") -> str:
    ops = list(dict.fromkeys(f"aten.{op}" for op, _ in work))
    copies = list(dict.fromkeys(COPIES[op] for op, _ in work if op in COPIES))
    largest = max(n for _, n in work)
    ran = f"{oversight.function} ran {', '.join(ops)}"
    done = f"{given}: outside {oversight.kernels}, {ran} on the activations"
    if copies:
        return (
            f"{done} (tensors of up to {largest} elements). {' and '.join(copies)} copies "
            "them: one more read and write of every element, the very traffic the fused "
            f"kernel exists to save. {oversight.copy_advice}"
        )
    return (
        f"{done} (tensors of up to {largest} elements). Each is another pass through memory: "
        f"{oversight.work_advice}"
    )


@dataclass
class Call:
    """One overseen call of the learner's function."""

    out: object  # what it returned
    fault: str | None  # why its values cannot be judged with this engine, or None
    # The fenced copies the function was given, as it left them: what an in-place update wrote.
    inputs: tuple[torch.Tensor, ...] = ()
    # A masked load without other= left lanes undefined (interpreted: they read NaN here).
    undefined_lanes: bool = False


@dataclass(frozen=True)
class Oversight:
    """What a Triton kata's function may do on each call, and what the learner is told when it
    does otherwise: the messages say what went wrong, each advice what to do instead."""

    function: str  # the function the kata asks for, e.g. "rms_norm"
    # Its tensor inputs, in order: (what the messages call it, what a read past its end finds).
    # The first is the activations (x): torch work on it outside the kernel fails.
    inputs: tuple[tuple[str, float], ...]
    views: frozenset[str]  # ATen ops besides allocation that torch may run on the activations
    # The checks named for what run() enforces on every call: a failure found by another check
    # is ranked as theirs, so that the report's headline names the mistake.
    in_bounds: str  # a memory access outside the tensors
    does_the_work: str  # torch work on the activations, or no kernel launched
    stray_advice: str  # after an access outside the tensors the kernel was given
    overrun_advice: str  # after a store past the end of a tensor the function allocated
    copy_advice: str  # after torch copied the activations
    work_advice: str  # after other torch work on the activations
    launch_advice: str  # after a call that launched no kernel
    unwritten_advice: str  # after output elements no program wrote
    # The inputs that are activations (by position: x; x and a residual; x and dy): torch work
    # on them outside a kernel fails.
    activations: tuple[int, ...] = (0,)
    # The check named for data races between programs (interpreted only, see _Races), and what
    # to do instead; None: not looked for.
    race_free: str | None = None
    race_advice: str = ""
    kernels: str = "the kernel"  # what the messages call the kata's kernels

    def run(
        self,
        kata: Any,
        *tensors: torch.Tensor,
        given: str,
        call: Any = None,
        programs: frozenset[int] | None = None,
        **kwargs: Any,
    ) -> Call:
        """The kata's function on fenced copies of the tensors, overseen (kwargs passed on);
        or call(*fenced copies, **kwargs), overseen the same way, where the suite drives
        several functions (an autograd Function's forward, then its backward).

        programs (interpreted only): run only these programs of each launch, by their first
        grid index, to look for races among many rows at the cost of a few: the values of
        such a call are not the function's, and must not be checked.

        Fails if the kernel touched memory outside its tensors (every access, interpreted;
        stores past the end of a new tensor, compiled), if two programs raced on an element
        (interpreted, where race_free is set), if torch worked on the activations outside the
        kernel, or if no kernel was launched.
        """
        x = tensors[0]
        fence = _span(x) + FENCE  # enough for a whole wrong row offset, or a 16384-wide block
        fenced, fences = [], []
        for t, (_, fill) in zip(tensors, self.inputs, strict=True):
            copy, storage = _fenced(t, fill, fence)
            try:
                copy.copy_(t)
            except RuntimeError:  # elements sharing memory (dy of y.sum(), expanded): copy_ refuses
                where = torch.arange(_span(t), device=t.device).as_strided(t.shape, t.stride())
                storage[where.reshape(-1)] = t.reshape(-1)  # those share one value
            fenced.append(copy)
            fences.append((storage, copy, fill))
        watch = _Watch([fenced[i] for i in self.activations], fence, self.views)
        launches = [0, 0]
        races = _Races() if INTERPRETED and self.race_free else None
        if INTERPRETED:
            named = zip(fenced, (name for name, _ in self.inputs), strict=True)
            _Audit.known = {_storage(t): _region(t, n) for t, n in named}
            _Audit.strays, _Audit.regions, _Audit.races = [], None, races
            _Audit.undefined = 0
        function = call or getattr(kata, self.function)
        LACKING.clear()
        _Audit.sample = programs if INTERPRETED else None
        try:
            with _counting_launches(launches), _recording_ops() as ops, watch:
                out = function(*fenced, **kwargs)
        except Exception as e:
            if LACKING:
                cannot_grade(_lacking_message(LACKING[0], x.device))
            if _Audit.strays:
                fail_for(self.in_bounds, _stray_message(given, self.stray_advice))
            if races and races.found and self.race_free:
                fail_for(self.race_free, f"{given}: {races.found[0]}. {self.race_advice}")
            if message := _annotations_trap(kata, e):
                fail(message)
            raise
        finally:
            _Audit.known = _Audit.regions = _Audit.races = _Audit.sample = None
        if _Audit.strays:
            fail_for(self.in_bounds, _stray_message(given, self.stray_advice))
        if races and races.found and self.race_free:
            fail_for(self.race_free, f"{given}: {races.found[0]}. {self.race_advice}")
        allocated = f"a tensor {self.function} allocated"
        fills = [(s, t, SENTINEL, allocated) for s, t in watch.allocated]
        names = (name for name, _ in self.inputs)
        fills += [(s, t, fill, name) for (s, t, fill), name in zip(fences, names, strict=True)]
        for storage, tensor, fill, name in fills:
            if tensor.device.type == "meta":  # no data, so nothing stored past it either
                continue
            span = _span(tensor)
            after = storage[span:]
            kept = after.isnan() if fill != fill else after == fill  # NaN fills compare unequal
            moved = (~kept).nonzero()
            if len(moved):
                first = int(moved[0])
                where = (
                    "right after its last element" if first == 0 else f"{first} elements after it"
                )
                fail_for(
                    self.in_bounds,
                    f"{given}: the kernel stored {len(moved)} values past the end of {name} "
                    f"({span} elements), the first {where}. " + self.overrun_advice,
                )
        if watch.work:
            fail_for(self.does_the_work, _work_message(given, watch.work, self))
        if launches[1] and not launches[0]:
            fail_for(
                self.does_the_work,
                f"{given}: {self.function} launched no Triton kernel. {self.launch_advice}",
            )
        dtypes = {t.dtype for t in tensors}
        fault = blamed(frozenset(ops), dtypes)
        note = _fault_note(fault, x.device) if fault else None
        return Call(out, note, tuple(fenced), undefined_lanes=INTERPRETED and _Audit.undefined > 0)

    def expect_values(
        self,
        call: Call,
        want: torch.Tensor,
        *,
        given: str,
        rtol: float | None = None,
        got: object = None,
        what: str = "output",
    ) -> None:
        """The call's output (or `got`, what it returned that is named `what`) must match want;
        elements that no program wrote are named as such.

        Skipped, with a note, where the engine computes wrongly an operation the kernel ran.
        """
        out = call.out if got is None else got
        if what != "output" and not isinstance(out, torch.Tensor):  # one of several results
            got_as = "None" if out is None else f"a {type(out).__name__}"
            fail(f"{given}: {what} is {got_as}, expected a tensor of shape {tuple(want.shape)}.")
        out = expect_tensor(out, self.function)
        if (out.shape, out.dtype, out.device) == (want.shape, want.dtype, want.device):
            if call.fault:
                pytest.skip(call.fault)
            unwritten = (out == SENTINEL) & (want != SENTINEL)
            if unwritten.any():
                first = [int(i) for i in unwritten.nonzero()[0]]
                fail(
                    f"{given}: {int(unwritten.sum())} of {out.numel()} {what} elements were "
                    f"never written by the kernel, the first at {first} (they still hold the "
                    f"value the grader filled the new tensor with). {self.unwritten_advice}"
                )
            if call.undefined_lanes and (out.isnan() & ~want.isnan()).any():
                first = [int(i) for i in (out.isnan() & ~want.isnan()).nonzero()[0]]
                fail(
                    f"{given}: {what} holds NaN, the first at {first}, where the expected value "
                    "is finite, and a masked load without other= left lanes undefined: they "
                    "read NaN here (on a GPU, whatever the memory held). Give other= to every "
                    "masked load whose lanes reach a sum or an output (other=0.0 for a sum)."
                )
        expect_close(out, want, given=given, rtol=rtol, what=what)
