"""--perf: time the learner's layer against torch's built-in on the same input and device.

A suite opts in with `@SUITE.perf` on `perf_case(kata, device) -> PerfCase` (checks.suite).
Both sides are warmed up, then
timed in the same run (the median of repeated calls, synchronized on a GPU), for forward and
for backward, with the peak memory their own tensors take. It reports ratios and never grades:
timings depend on the machine, correctness does not.
"""

from __future__ import annotations

import os
import statistics
import textwrap
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch.utils._pytree import tree_leaves

from norm_katas.checks.suite import PerfCase, declared
from norm_katas.engine.learners import kata_of
from norm_katas.runtime.torch_compat import DispatchMode

if TYPE_CHECKING:
    import pytest

    from norm_katas.engine.report import Report

# Per measurement: enough calls for a stable median, and no more. The self-tests, which only
# check that every kata can be measured, set the budget to 0: one warm-up and one timed call.
BUDGET_S = float(os.environ.get("NORM_KATAS_PERF_BUDGET_S", "1.0"))
WARM_UPS, MIN_CALLS = (3, 5) if BUDGET_S > 0 else (1, 1)
GAP = 1.5  # a ratio above this gets the explanation of where time usually goes


@dataclass
class Timing:
    forward_s: float
    backward_s: float | None
    peak_bytes: int


class _LiveBytes(DispatchMode):
    """The high-water mark of bytes held by tensors created under it."""

    def __init__(self) -> None:
        super().__init__()
        self.live = self.peak = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        inputs = {t.untyped_storage().data_ptr() for t in tree_leaves((args, kwargs)) if _dense(t)}
        for t in tree_leaves(out):
            if _dense(t) and t.untyped_storage().data_ptr() not in inputs:
                size = t.untyped_storage().nbytes()
                self.live += size
                self.peak = max(self.peak, self.live)
                weakref.finalize(t, self._free, size)
        return out

    def _free(self, size: int) -> None:
        self.live -= size


def _dense(t: object) -> bool:
    return isinstance(t, torch.Tensor) and t.layout == torch.strided and t.device.type != "meta"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def _median_seconds(run: Callable[[], object], device: torch.device) -> float:
    for _ in range(WARM_UPS):  # caches, allocator, lazy initialisation
        run()
    _sync(device)
    times: list[float] = []
    deadline = time.perf_counter() + BUDGET_S
    while len(times) < MIN_CALLS or (time.perf_counter() < deadline and len(times) < 200):
        start = time.perf_counter()
        run()
        _sync(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _clear_grads(inputs: tuple[torch.Tensor, ...]) -> None:
    for t in inputs:
        t.grad = None


def measure(
    forward: Callable[[], Any], inputs: tuple[torch.Tensor, ...], device: torch.device
) -> Timing:
    forward_s = _median_seconds(lambda: forward(), device)
    mode = _LiveBytes()
    with mode:
        out = forward()
        grad = None
        trainable = [t for t in inputs if t.requires_grad]
        if trainable and isinstance(out, torch.Tensor) and out.requires_grad:
            grad = torch.ones_like(out)
            out.backward(grad)
            _clear_grads(inputs)
        del out
    backward_s = None
    if grad is not None:
        out = forward()

        def backward() -> None:
            out.backward(grad, retain_graph=True)

        backward_s = _median_seconds(backward, device)
        _clear_grads(inputs)
    return Timing(forward_s, backward_s, mode.peak)


def report(case: PerfCase, device: torch.device) -> dict[str, Any]:
    """Both sides measured, as a JSON-able record (an 'error' entry if yours could not run)."""
    result: dict[str, Any] = {
        "given": case.given,
        "builtin": case.builtin_name,
        "device": str(device),
    }
    if case.note:
        result["note"] = case.note
    try:
        theirs = measure(case.builtin, case.inputs, device)
    except Exception as e:  # the grader's own reference: say so rather than blame the learner
        result["error"] = f"the built-in could not be measured ({type(e).__name__}: {e})"
        return result
    try:
        mine = measure(case.mine, case.inputs, device)
    except Exception as e:
        result["error"] = f"your code raised {type(e).__name__}: {e}"
        return result
    result["mine"], result["theirs"] = vars(mine), vars(theirs)
    if case.bytes_moved and device.type == "cuda":
        result["bandwidth_gb_s"] = {
            "mine": case.bytes_moved / mine.forward_s / 1e9,
            "theirs": case.bytes_moved / theirs.forward_s / 1e9,
        }
    return result


def measure_suite(
    session: pytest.Session, graded: Report, load: Any, device: torch.device
) -> dict[str, Any] | None:
    """--perf in a grading: the suite's perf_case, timed against torch's built-in (never graded).
    `graded`: the grading's report; `load`: loads the learner's module for a kata."""
    suite = next((item.module for item in session.items if hasattr(item, "module")), None)
    make_case = declared(suite).perf_case
    if make_case is None or graded.load_error:
        return None
    try:
        kata = load(kata_of(suite))
        torch.manual_seed(0)
        return report(make_case(kata, device), device)
    except BaseException as e:  # the learner's constructor, say: report, never crash
        result = {"given": graded.title, "device": str(device)}
        result["error"] = f"your code raised {type(e).__name__}: {e}".strip()
        return result


def format_report(result: dict[str, Any]) -> str:
    lines = [
        f"Performance  ·  {result['given']}, on {result['device']}  (reported, never graded)",
    ]
    if "error" in result:
        return "\n".join([*lines, f"  Not measured: {result['error']}."])
    mine, theirs = result["mine"], result["theirs"]
    name = result["builtin"]
    w = max(16, len(name) + 3)  # the built-in's column fits its name (nn.SyncBatchNorm)
    lines.append(f"  {'':14}{'yours':>12}{name:>{w}}{'ratio':>10}")
    rows = [
        ("forward", "forward_s", _ms),
        ("backward", "backward_s", _ms),
        ("peak memory", "peak_bytes", _mb),
    ]
    worst = 0.0
    for label, key, unit in rows:
        a, b = mine.get(key), theirs.get(key)
        if a is None or b is None:
            continue
        ratio = a / b if b else float("inf")
        if key != "peak_bytes":
            worst = max(worst, ratio)
        lines.append(f"  {label:14}{unit(a):>12}{unit(b):>{w}}{_ratio(ratio):>10}")
    if bw := result.get("bandwidth_gb_s"):
        lines.append(f"  {'bandwidth':14}{bw['mine']:>7.0f} GB/s{bw['theirs']:>{w - 5}.0f} GB/s")
    if note := result.get("note"):
        lines += ["", *textwrap.wrap(note, 92, initial_indent="  ", subsequent_indent="  ")]
    elif worst > GAP:
        lines += ["", *WHY_SLOWER]
    return "\n".join(lines)


WHY_SLOWER = [
    "  Where the time usually goes, when a from-scratch layer is slower than the built-in:",
    "  * every tensor operation is one pass over memory: x - mean, its square, the mean of",
    "    that, the division... A normalization is memory-bound, so five passes cost about five",
    "    times one. The built-ins fuse them into one or two kernels; torch.compile can too.",
    "  * a Python loop over rows or elements runs the interpreter once per item;",
    "  * .float() or float64 copies and accumulations double the bytes moved;",
    "  * intermediates kept alive for backward (x - mean, x̂, ...) add to peak memory.",
]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def _mb(nbytes: float) -> str:
    return f"{nbytes / 2**20:.3g} MB"


def _ratio(ratio: float) -> str:
    return f"{ratio:.2f}×"
