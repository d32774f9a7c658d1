"""A failed check's exception in the learner's words: how it failed (its kind), the message
without a traceback, and the line of the learner's file that raised it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from norm_katas.engine.report.data import CRASH, FAIL, TIMEOUT, TODO, Kind
from norm_katas.runtime.loader import (
    NotThisCheck,
    display_path,
    learner_frame,
    raised_in,
)
from norm_katas.runtime.outcomes import TimedOut


def explain(excinfo: pytest.ExceptionInfo[BaseException], learner: Path | None) -> tuple[Kind, str]:
    """(kind, message) for a failed check, without a traceback."""
    e = excinfo.value
    text = str(e).strip()
    if isinstance(e, pytest.fail.Exception):
        if isinstance(e, TimedOut):  # the learner's code ran out of time: the check says where
            return TIMEOUT, text
        if isinstance(e, NotThisCheck):  # a missing name, the reference: no hint of the check's
            return CRASH, text
        return FAIL, text
    if _authors_assertion(excinfo, learner):
        # pytest appends its introspection after the author's message; keep the message.
        return FAIL, text.split("\nassert ")[0] or "an assertion failed"
    where = _learner_line(excinfo, learner)
    if isinstance(e, NotImplementedError) and where:
        return TODO, f"not implemented yet ({text or 'NotImplementedError'}{where})"
    if isinstance(e, SystemExit):
        return CRASH, f"your code called sys.exit({e.code!r}) during this check{where}"
    name = getattr(e, "shown_as", type(e).__name__)
    said = f": {text}" if text else ""  # `raise KeyboardInterrupt` says nothing
    if where:
        return CRASH, f"your code raised {name}{said}{where}"
    return CRASH, f"{name}{said}"


def raised_at(excinfo: pytest.ExceptionInfo[BaseException], learner: Path | None) -> str:
    """For an exception out of the learner's code, its type and line there ("RuntimeError at
    katas/layernorm.py line 50"; a time limit's, "time-out at ..."), else "": the author's
    failures (an assertion, fail()) are not the learner's exceptions."""
    e = excinfo.value
    if _authors_assertion(excinfo, learner) or (
        isinstance(e, pytest.fail.Exception) and not isinstance(e, TimedOut)
    ):
        return ""
    frame = learner_frame(excinfo.tb, learner) if learner is not None else None
    if frame is None:
        return ""
    name = "time-out" if isinstance(e, TimedOut) else getattr(e, "shown_as", type(e).__name__)
    return f"{name} at {display_path(learner)} line {frame.lineno}"


def _authors_assertion(excinfo: pytest.ExceptionInfo[BaseException], learner: Path | None) -> bool:
    """An AssertionError of the suite's (a check's `assert`), not of the learner's code: one
    that an `assert` in the learner's file raised is reported as their code's exception."""
    if not isinstance(excinfo.value, AssertionError):
        return False
    return learner is None or not raised_in(excinfo.tb, learner)


def _learner_line(excinfo: pytest.ExceptionInfo[BaseException], learner: Path | None) -> str:
    frame = learner_frame(excinfo.tb, learner) if learner is not None else None
    if frame is None:
        return ""
    return f", at {display_path(learner)} line {frame.lineno}: {(frame.line or '').strip()}"
