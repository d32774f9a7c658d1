"""How a check ends other than by passing: the grader's control flow, free of torch.

The plugin and the report tell these apart with `isinstance`; kata authors raise them through
the functions here, which `norm_katas.checks` re-exports.
"""

from __future__ import annotations

import signal
from typing import NoReturn

import pytest


class TimedOut(pytest.fail.Exception):
    """The learner's code did not finish within its limit: a failed check of kind timeout.

    A pytest outcome (a BaseException), so that the learner's `except Exception` cannot swallow
    it. `detail` says how long and where, for messages that put it in their own words. `busy`:
    the code used its CPU time (a loop); False: it waited, idle (a sleep, input, a lock)."""

    busy = True

    def __init__(self, message: str, detail: str = "", busy: bool = True) -> None:
        super().__init__(message, pytrace=False)
        self.detail = detail or message
        self.busy = busy


class GraderTooSlow(pytest.fail.Exception):
    """A check's time went to the grader's own work: the grading ends as the grader's failure,
    with this message, never as a failed check."""

    def __init__(self, message: str) -> None:
        super().__init__(message, pytrace=False)


class RaisedInterrupt(Exception):
    """A KeyboardInterrupt that code raised itself (`raise KeyboardInterrupt`, a debugging stop
    left in), no Ctrl-C having reached the grading. pytest ends the whole run on one, leaving
    the checks after it unrun with no word of why: a check fails on this instead, told by the
    name the learner raised. (A Ctrl-C never reaches a grading's process: it has a process
    group of its own, and the process that started it stops it outright.)"""

    shown_as = "KeyboardInterrupt"


_signalled = [False]  # whether a SIGINT reached this process


def on_sigint(signum: int, frame: object) -> NoReturn:
    """A grading process's SIGINT handler: an interrupt that came as a signal, remembered as
    one, so that it still stops the grading."""
    _signalled[0] = True
    raise KeyboardInterrupt


def raised_by_code(e: BaseException) -> bool:
    """Whether e is a KeyboardInterrupt that code raised in a grading's process, rather than
    one a SIGINT caused (or any in another process: pytest run by hand stops on Ctrl-C)."""
    return (
        isinstance(e, KeyboardInterrupt)
        and not _signalled[0]
        and signal.getsignal(signal.SIGINT) is on_sigint
    )


def fail(message: str) -> NoReturn:
    """Fail the check with a message written for the learner (no traceback shown)."""
    pytest.fail(message, pytrace=False)


class CannotGrade(Exception):
    """This environment cannot grade the kata (a package missing or broken): the grader's
    failure, reported with exit code 3 and this message, never a failed check."""


def cannot_grade(message: str) -> NoReturn:
    raise CannotGrade(message)


class Hung(TimedOut):
    """A check that stopped the learner's code because it never finished (a rank in an
    endless loop): it counts as a timeout, so that the run stops after a few instead of
    waiting out every remaining check."""


def fail_hung(message: str) -> NoReturn:
    raise Hung(message)


class Belongs(pytest.fail.Exception):
    """A failure of the property another check is named for, met first by this one (a suite
    that oversees every call, say): the report ranks it as that check's, so that the headline
    names the mistake rather than whichever check happened to run into it."""

    check: str = ""  # the test function named for the mistake


def fail_for(check: str, message: str) -> NoReturn:
    """Fail this check with `message`, a mistake that the check function `check` is named for."""
    error = Belongs(message, pytrace=False)
    error.check = check
    raise error
