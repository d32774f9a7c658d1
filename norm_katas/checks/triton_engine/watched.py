"""A learner's own test of a Triton kata (the test-writing mode), watched as a suite's calls
are: every interpreted launch it makes checked by address (memory), its operations recorded
against the engine's known faults (probe).

The test calls the layer as it likes, so nothing is fenced or copied: each launch's regions
are the whole storages its tensor arguments point into. An access outside them is turned off
(it touches nothing, so the test process never reads or writes memory it does not own) and
makes the test fail: on a GPU the kernel would read garbage or crash there. A test that ran an
operation the engine computes wrongly is not judged at all, pass or fail, since its outcome
says nothing about the layer.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from norm_katas.checks.triton_engine import mode
from norm_katas.checks.triton_engine.guarded import counting_launches
from norm_katas.checks.triton_engine.interpreter import LACKING
from norm_katas.checks.triton_engine.memory import Audit, stray_message
from norm_katas.checks.triton_engine.operations import recording
from norm_katas.checks.triton_engine.probe import blamed

STRAY_ADVICE = "The layer is wrong: the test caught it."


class OutsideItsTensors(AssertionError):
    """A kernel launched by the test read or wrote memory outside the tensors it was given."""


@dataclass
class Seen:
    """What the watch saw during one test."""

    outside: str | None = None  # an access outside the launch's tensors, in words
    unjudged: str | None = None  # why the engine cannot judge this test, or None


@contextmanager
def watched() -> Iterator[Seen]:
    """Watch the launches made inside the block; read the Seen after it ends."""
    seen = Seen()
    if not mode.INTERPRETED:  # compiled: nothing to watch by address
        yield seen
        return
    cpu = torch.device("cpu")
    Audit.known, Audit.strays, Audit.undefined = {}, [], 0
    Audit.regions = Audit.races = Audit.sample = Audit.traffic = None
    LACKING.clear()
    launches = [0, 0]
    try:
        with counting_launches(launches), recording() as ops:
            yield seen
    finally:
        if Audit.strays:
            seen.outside = stray_message("In this test", STRAY_ADVICE)
        Audit.known = Audit.regions = None
        Audit.strays = []
        engine = mode.engine_name(cpu)
        if LACKING:
            seen.unjudged = (
                f"{engine} cannot run libdevice.{LACKING[0]}, which a layer's kernel called there."
            )
        elif fault := blamed(frozenset(ops), set()):
            seen.unjudged = (
                f"{engine} gets {fault.what} wrong, and a layer's kernel did that there: test "
                "in float32 or float16, which it computes right."
            )
