"""Starting the engine: Triton imported for the device (mode), the interpreter patched and
watched (interpreter, operations, memory), and the whole proven (probe), once per process.

Anything that goes wrong here is the grader's failure (exit 3), never the learner's: their
file has not even loaded yet.
"""

from contextlib import suppress

import torch

from norm_katas.checks import cannot_grade
from norm_katas.checks.triton_engine import interpreter, memory, mode, operations, probe

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
    if problem := mode.load(device):
        return problem
    if mode.INTERPRETED:
        interpreter.patch()
        operations.record()  # before memory.audit, which wraps the builder's masked load again
        memory.audit()
    return probe.prove(device)
