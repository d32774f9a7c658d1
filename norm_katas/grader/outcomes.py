"""How a check ends other than by passing: the grader's control flow, free of torch.

The plugin and the report tell these apart with `isinstance`; kata authors raise them through
the functions here, which `norm_katas.grader.checks` re-exports.
"""

from __future__ import annotations

from typing import NoReturn

import pytest

from norm_katas.grader.limits import TimedOut


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
