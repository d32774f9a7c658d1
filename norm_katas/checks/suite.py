"""What the engine reads from a suite, declared in one typed object: `SUITE = Suite(...)`
near the suite's top, and the `PerfCase` that --perf times. The engine reads nothing else of a
suite's module but its checks (the `test_` functions). See docs/writing-a-kata.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch


@dataclass
class PerfCase:
    """What --perf times: your layer and torch's on the same input.

    mine and builtin each run one forward pass and return its output; `inputs` are the
    tensors whose gradients backward computes (they must require grad for backward to be
    timed). bytes_moved is the least a fused kernel must read and write in forward, for the
    bandwidth shown on a GPU.
    """

    given: str
    mine: Callable[[], Any]
    builtin: Callable[[], Any]
    builtin_name: str
    inputs: tuple[torch.Tensor, ...] = ()
    bytes_moved: int | None = None
    # Said under the figures instead of the usual causes of a gap (WHY_SLOWER), when the
    # kata has its own (a Triton kernel in the interpreter is slow for another reason).
    note: str | None = None

    @classmethod
    def of_layers(
        cls, given: str, mine: Callable[[Any], Any], builtin: Callable[[Any], Any],
        x: torch.Tensor, *, builtin_name: str,
    ) -> PerfCase:  # fmt: skip
        """Two layers on the same x (which requires grad): forward reads x and writes an
        output of its size, the least a fused kernel moves."""
        return cls(
            given=given, mine=lambda: mine(x), builtin=lambda: builtin(x),
            builtin_name=builtin_name, inputs=(x,), bytes_moved=2 * x.nbytes,
        )  # fmt: skip


MakePerfCase = Callable[[ModuleType, torch.device], PerfCase]
DeviceNote = Callable[[torch.device], "str | None"]


@dataclass
class Suite:
    """What a kata's suite tells the engine beyond its checks, all optional:

        SUITE = Suite(shards=2, no_device_note="...")

        @SUITE.perf
        def perf_case(kata, device) -> PerfCase: ...

    - `shards`: 2 for a suite whose checks take most of a second each (Triton's interpreter):
      after the first check, a forked worker runs every second check (engine.shards);
    - `perf_case(kata, device)`: the `PerfCase` that --perf times (`@SUITE.perf`);
    - `device_note(device)`: a line under the report's header on what --device means for this
      kata, or None (`@SUITE.note`, or given as `device_note=`);
    - `no_device_note`: said instead of the engine's own note when the asked device is missing
      (Triton: the kernel runs in the interpreter, not on simulated CUDA).
    """

    shards: int = 1
    no_device_note: str | None = None
    perf_case: MakePerfCase | None = None
    device_note: DeviceNote | None = None

    def perf(self, make: MakePerfCase) -> MakePerfCase:
        """Decorator: `make(kata, device)` is what --perf times."""
        self.perf_case = make
        return make

    def note(self, note: DeviceNote) -> DeviceNote:
        """Decorator: `note(device)` is said under the report's header."""
        self.device_note = note
        return note


DEFAULT = Suite()


def declared(module: ModuleType | None) -> Suite:
    """The suite module's `SUITE`, or the defaults where it declares none."""
    found = vars(module).get("SUITE", DEFAULT) if module is not None else DEFAULT
    if not isinstance(found, Suite):
        raise TypeError(f"{module.__name__}.SUITE is a {type(found).__name__}, not a Suite")
    return found
