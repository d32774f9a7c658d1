"""What a Triton suite declares and calls: an `Oversight` of what the kata's function may do,
whose `run` calls it fenced and watched (guarded, memory, races) and returns a `Call`, and whose
`expect_values` checks that call's values, or skips them where the engine gets an operation
the kernel ran wrong (probe).
"""

from dataclasses import dataclass
from typing import Any

import pytest
import torch

from norm_katas.checks import cannot_grade, expect_close, expect_tensor, fail, fail_for
from norm_katas.checks.triton_engine import mode
from norm_katas.checks.triton_engine.guarded import (
    FENCE,
    SENTINEL,
    Watch,
    counting_launches,
    fenced,
    region_of,
    span_of,
    storage_of,
)
from norm_katas.checks.triton_engine.interpreter import LACKING, annotations_trap, lacking_message
from norm_katas.checks.triton_engine.memory import Audit, Traffic, stray_message
from norm_katas.checks.triton_engine.operations import recording
from norm_katas.checks.triton_engine.probe import blamed, fault_note
from norm_katas.checks.triton_engine.races import Races

# The ATen copies of the activations, by what the learner wrote.
COPIES = {
    "clone": ".contiguous() or .clone()",
    "_to_copy": ".to() or .float()",
    "copy_": ".copy_()",
}


def _work_message(given: str, work: list[tuple[str, int]], oversight: "Oversight") -> str:
    """What torch did to the activations outside the kernels, and what to do instead."""
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
    # Where run() was asked to count it (interpreted only; None compiled): each tensor's
    # traffic, the inputs by their names and what the function allocated, in the order first
    # touched.
    traffic: tuple[Traffic, ...] | None = None

    def traffic_of(self, name: str) -> Traffic | None:
        """The traffic of the input of this name ("x"), or None where it was not counted or
        never touched."""
        return next((t for t in self.traffic or () if t.name == name), None)


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
    # The check named for data races between programs (interpreted only, see races.Races), and what
    # to do instead; None: not looked for.
    race_free: str | None = None
    race_advice: str = ""
    kernels: str = "the kernel"  # what the messages call the kata's kernels
    # After NaN in an output where a masked load without other= left lanes undefined: which
    # other= each load wants (a sum's lanes 0.0; a max's -inf).
    undefined_advice: str = (
        "Give other= to every masked load whose lanes reach a sum or an output (other=0.0 for a "
        "sum)."
    )

    def run(
        self,
        kata: Any,
        *tensors: torch.Tensor,
        given: str,
        call: Any = None,
        programs: frozenset[int] | None = None,
        traffic: bool = False,
        **kwargs: Any,
    ) -> Call:
        """The kata's function on fenced copies of the tensors, overseen (kwargs passed on);
        or call(*fenced copies, **kwargs), overseen the same way, where the suite drives
        several functions (an autograd Function's forward, then its backward).

        programs (interpreted only): run only these programs of each launch, by their first
        grid index, to look for races among many rows at the cost of a few: the values of
        such a call are not the function's, and must not be checked.

        traffic (interpreted only): count what every load and store did to each tensor (how
        many times each element was read, the widest access), in Call.traffic.

        Fails if the kernel touched memory outside its tensors (every access, interpreted;
        stores past the end of a new tensor, compiled), if two programs raced on an element
        (interpreted, where race_free is set), if torch worked on the activations outside the
        kernel, or if no kernel was launched.
        """
        x = tensors[0]
        fence = span_of(x) + FENCE  # enough for a whole wrong row offset, or a 16384-wide block
        copies, fences = [], []
        for t, (_, fill) in zip(tensors, self.inputs, strict=True):
            copy, storage = fenced(t, fill, fence)
            try:
                copy.copy_(t)
            except RuntimeError:  # elements sharing memory (dy of y.sum(), expanded): copy_ refuses
                where = torch.arange(span_of(t), device=t.device).as_strided(t.shape, t.stride())
                storage[where.reshape(-1)] = t.reshape(-1)  # those share one value
            copies.append(copy)
            fences.append((storage, copy, fill))
        watch = Watch([copies[i] for i in self.activations], fence, self.views)
        launches = [0, 0]
        races = Races() if mode.INTERPRETED and self.race_free else None
        if mode.INTERPRETED:
            named = zip(copies, (name for name, _ in self.inputs), strict=True)
            Audit.known = {storage_of(t): region_of(t, n) for t, n in named}
            Audit.strays, Audit.regions, Audit.races = [], None, races
            Audit.undefined = 0
            Audit.traffic = {} if traffic else None
        function = call or getattr(kata, self.function)
        LACKING.clear()
        Audit.sample = programs if mode.INTERPRETED else None
        try:
            with counting_launches(launches), recording() as ops, watch:
                out = function(*copies, **kwargs)
        except Exception as e:
            if LACKING:
                cannot_grade(lacking_message(LACKING[0], x.device))
            if Audit.strays:
                fail_for(self.in_bounds, stray_message(given, self.stray_advice))
            if races and races.found and self.race_free:
                fail_for(self.race_free, _race_message(given, races, self.race_advice))
            if message := annotations_trap(kata, e):
                fail(message)
            raise
        finally:
            Audit.known = Audit.regions = Audit.races = Audit.sample = None
            counted, Audit.traffic = Audit.traffic, None
        if Audit.strays:
            fail_for(self.in_bounds, stray_message(given, self.stray_advice))
        if races and races.found and self.race_free:
            fail_for(self.race_free, _race_message(given, races, self.race_advice))
        allocated = f"a tensor {self.function} allocated"
        fills = [(s, t, SENTINEL, allocated) for s, t in watch.allocated]
        names = (name for name, _ in self.inputs)
        fills += [(s, t, fill, name) for (s, t, fill), name in zip(fences, names, strict=True)]
        for storage, tensor, fill, name in fills:
            if tensor.device.type == "meta":  # no data, so nothing stored past it either
                continue
            span = span_of(tensor)
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
        note = fault_note(fault, x.device) if fault else None
        undefined = mode.INTERPRETED and Audit.undefined > 0
        seen = tuple(counted.values()) if counted is not None else None
        return Call(out, note, tuple(copies), undefined_lanes=undefined, traffic=seen)

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
                    f"read NaN here (on a GPU, whatever the memory held). {self.undefined_advice}"
                )
        expect_close(out, want, given=given, rtol=rtol, what=what)


def expect_input_kept(call: Call, x: torch.Tensor, *, given: str, name: str = "x") -> None:
    """The call left its input (the copy it was handed, call.inputs[0]) as x was: no store
    into it. NaN compares as NaN."""
    expect_kept(call.inputs[0], x, given=given, name=name)


def expect_kept(
    left: torch.Tensor, x: torch.Tensor, *, given: str, name: str = "x", owner: str | None = None
) -> None:
    """`left`, the copy of x a call was handed, still holds x's values; else fail (for
    `owner`, the check named for it, where another check meets it). Callable inside an
    overseen call: the grader's own comparison is not the learner's torch work."""
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():  # the Watch of an overseen call: not the learner's work
        same = torch.equal(left, x) or (
            torch.equal(left.isnan(), x.isnan()) and torch.equal(left.nan_to_num(), x.nan_to_num())
        )
        changed = 0 if same else int((left != x).logical_and(~(left.isnan() & x.isnan())).sum())
    if not same:
        message = (
            f"{given}: the call wrote into its input {name} ({changed} of {x.numel()} "
            "elements changed), so the caller's tensor no longer holds what it passed in. Store "
            f"the output into a tensor of its own (torch.empty(...)), and only load {name}."
        )
        fail_for(owner, message) if owner else fail(message)


def _race_message(given: str, races: Races, advice: str) -> str:
    """The first race found, with the kata's advice unless it carries its own."""
    found = f"{given}: {races.found[0]}."
    return found if 0 in races.advised else f"{found} {advice}"
