"""The engine proven, before the learner's file loads, on what norm and softmax kernels exercise.

A probe runs small kernels of its own in float32, float16 and bfloat16: loads and stores
(masked, with `other`), casts to and from float32, products, sums and differences in each dtype
and mixed with float32, tl.sum, tl.max (over -inf lanes) and tl.maximum, sqrt, rsqrt, exp and
exp2, programs at int64 row offsets. A float32 case gone wrong means nothing can be graded
(`prove` says why). A half-precision one is a Fault, blamed on the interpreter operations only
its failing case ran (operations.recording): a call that ran one gets a note (`fault_note`) in
place of its value checks. Compiled, where operations cannot be seen, a fault would affect every
call in its dtype.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from norm_katas.checks import dtype_name
from norm_katas.checks.triton_engine import mode
from norm_katas.checks.triton_engine.operations import Ops, recording

HALF = (torch.float16, torch.bfloat16)
# triton.language, read by the kernels below as a global of this module, where Triton looks for
# it (and the interpreter patches it): set by prove(), once start() has imported Triton.
tl: Any = None

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


def _probe_sub(X, W, Y):
    cols = tl.arange(0, 8)
    tl.store(Y + cols, tl.load(X + cols) - tl.load(W + cols))


def _probe_max(X, Y):
    """Y[0] = the max of X[:6], its two spare lanes loaded as -inf."""
    cols = tl.arange(0, 8)
    tl.store(Y, tl.max(tl.load(X + cols, mask=cols < 6, other=-float("inf")), axis=0))


def _probe_maximum(X, W, Y):
    cols = tl.arange(0, 8)
    tl.store(Y + cols, tl.maximum(tl.load(X + cols), tl.load(W + cols)))


def _probe_exp(X, Y):
    cols = tl.arange(0, 8)
    x = tl.load(X + cols)
    tl.store(Y + cols, tl.exp(x))
    tl.store(Y + 8 + cols, tl.exp2(x))


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


def _cases(device: torch.device) -> list[tuple[str, torch.dtype, object]]:
    """(what it proves, the dtype it is about, run) for each probe case; run() launches its
    kernel and returns (got, expected) as float64 tensors."""
    f32 = torch.float32

    def tensor(values, dtype):
        return torch.tensor(values, dtype=dtype, device=device)

    def copy(dtype):
        x, y = tensor(PROBE_X, dtype), torch.full((16,), 7.0, dtype=dtype, device=device)
        mode.triton.jit(_probe_copy)[(1,)](x, y)
        return y, torch.cat([x[:6], tensor([-1.5, 7.0], dtype), x])

    def binary(kernel, op, dtype, w_dtype):
        x, w = tensor(PROBE_X, dtype), tensor(PROBE_W, w_dtype)
        y = torch.empty(8, dtype=torch.promote_types(dtype, w_dtype), device=device)
        mode.triton.jit(kernel)[(1,)](x, w, y)
        return y, op(x.double(), w.double())

    def total(dtype):
        x, y = tensor(PROBE_X, dtype), torch.empty(1, dtype=dtype, device=device)
        mode.triton.jit(_probe_sum)[(1,)](x, y)
        return y, x.double().sum().reshape(1)

    def casts(dtype):
        x, x32 = tensor(PROBE_X, dtype), tensor(PROBE_ROUNDED, f32)
        y, y32 = torch.empty(8, dtype=dtype, device=device), torch.empty(8, device=device)
        mode.triton.jit(_probe_casts)[(1,)](x, x32, y, y32)
        return torch.cat([y32.double(), y.double()]), torch.cat(
            [x.double(), x32.to(dtype).double()]
        )

    def largest(dtype):
        x, y = tensor(PROBE_X, dtype), torch.empty(1, dtype=dtype, device=device)
        mode.triton.jit(_probe_max)[(1,)](x, y)
        return y, x[:6].double().max().reshape(1)

    def exps():
        x = tensor(PROBE_X, f32)
        y = torch.empty(16, device=device)
        mode.triton.jit(_probe_exp)[(1,)](x, y)
        x = x.double()
        return y, torch.cat([x.exp(), x.exp2()])

    def roots():
        x = tensor((0.25, 1.0, 4.0, 16.0, 2.25, 0.0625, 9.0, 6.25), f32)
        y = torch.empty(24, device=device)
        mode.triton.jit(_probe_roots)[(1,)](x, y, 4)
        x = x.double()
        return y, torch.cat([x.sqrt(), x.rsqrt(), x / 4])

    def rows():
        x = torch.arange(16.0, device=device).reshape(2, 8)
        y = torch.empty(2, 4, device=device)
        mode.triton.jit(_probe_rows)[(2,)](x, y, x.stride(0), y.stride(0))
        return y, x[:, :4]

    cases = []
    for dtype in (f32, *HALF):
        name = dtype_name(dtype)
        cases += [
            (f"{name} loads and stores, masked and not", dtype, lambda d=dtype: copy(d)),
            (f"{name} × {name}", dtype, lambda d=dtype: binary(_probe_mul, torch.mul, d, d)),
            (f"{name} + {name}", dtype, lambda d=dtype: binary(_probe_add, torch.add, d, d)),
            (f"{name} − {name}", dtype, lambda d=dtype: binary(_probe_sub, torch.sub, d, d)),
            (f"tl.sum of {name}", dtype, lambda d=dtype: total(d)),
            (f"tl.max of {name}, masked lanes -inf", dtype, lambda d=dtype: largest(d)),
            (
                f"tl.maximum of {name}s",
                dtype,
                lambda d=dtype: binary(_probe_maximum, torch.maximum, d, d),
            ),
        ]
        if dtype != f32:
            cases += [
                (f"{name} ↔ float32 casts", dtype, lambda d=dtype: casts(d)),
                (f"{name} × float32", dtype, lambda d=dtype: binary(_probe_mul, torch.mul, d, f32)),
            ]
    return [
        *cases,
        ("float32 sqrt, rsqrt and division", f32, roots),
        ("float32 exp and exp2", f32, exps),
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


def prove(device: torch.device) -> str | None:
    """Run every probe case: why Triton cannot grade here (a float32 case is wrong), or None,
    with the half-precision cases it gets wrong in FAULTS."""
    global tl
    tl = mode.tl  # what the kernels above read, now that Triton is imported
    where = mode.engine_name(device)
    proven: set = set()
    failed: list[tuple[str, torch.dtype, str, frozenset]] = []
    FAULTS.clear()
    Ops.wanted = None  # the probe compares every operation its cases ran
    for what, dtype, case in _cases(device):
        with recording() as ops:
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
                mode.INTERPRETED
                and mode.version(mode.triton.__version__) < (3, 2)
                and mode.version(np.__version__) >= (2, 0)
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
    Ops.wanted = frozenset(op[0] for fault in FAULTS for op in fault.ops)
    return None


def _short(t: torch.Tensor) -> str:
    return "[" + ", ".join(f"{v:.4g}" for v in t.flatten().tolist()[:8]) + "]"


def fault_note(fault: Fault, device: torch.device) -> str:
    """What a call that may have met the fault is told, in place of its value checks."""
    elsewhere = (
        "Grade with --device cuda on an NVIDIA GPU, where Triton compiles the kernel (or with a "
        "Triton whose interpreter gets it right)."
        if mode.INTERPRETED
        else "Grade on the CPU too, in Triton's interpreter, or with another Triton."
    )
    return (
        f"{mode.engine_name(device)} gets {fault.what} wrong (its test kernel {fault.detail}), and "
        "your kernel does that here, so the grader cannot tell whether its values are right. "
        + elsewhere
    )
