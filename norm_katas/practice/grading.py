"""Grade through the grader and record the attempt in the history."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from norm_katas.engine import runner
from norm_katas.engine.request import Request
from norm_katas.practice import history


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while the grading ran: its process is gone, there is no verdict, and nothing
    was recorded."""


def grade(
    request: Request,
    mode: str = "practice",
    cancel: Callable[[], bool] | None = None,
    out: TextIO | None = None,
    **mock: object,
) -> runner.Graded:
    """runner.grade(), then record the attempt: never the reference solution's, nor a run of
    some checks only (-k, -m), which says nothing about the kata as a whole, nor a usage error
    (-k matching no check), which graded nothing. A grading that cancel() stopped has no
    report, so it is not recorded either. The checklist goes to `out` (runner.grade's)."""
    if request.tests:
        return _grade_tests(request, cancel, out)
    try:
        outcome = runner.grade(request, cancel=cancel, out=out)
    except KeyboardInterrupt:
        raise Interrupted from None
    report = outcome.report
    recorded = report is not None and not report.partial and not request.reference
    if recorded and outcome.code in (runner.SOLVED, runner.NOT_SOLVED):
        try:
            history.record_report(report, mode, request.hints, **mock)  # type: ignore[arg-type]
        except Exception as e:  # the history must never cost the learner a verdict
            print(f"(could not record this attempt in {history.db_path()}: {e})", file=sys.stderr)
    return outcome


def _grade_tests(
    request: Request, cancel: Callable[[], bool] | None, out: TextIO | None
) -> runner.Graded:
    """The test-writing mode (engine.proving), recorded as its own mode: never the reference
    test file's grading, nor a stub's (nothing tested yet)."""
    from norm_katas.engine import proving

    try:
        outcome = proving.grade(request, cancel=cancel, out=out)
    except KeyboardInterrupt:
        raise Interrupted from None
    verdict = outcome.proof
    reference = request.file == request.kata.tests_solution
    if verdict is not None and not reference and outcome.code in (runner.SOLVED, runner.NOT_SOLVED):
        try:
            history.record_proof(verdict, request.hints)
        except Exception as e:  # the history must never cost the learner a verdict
            print(f"(could not record this attempt in {history.db_path()}: {e})", file=sys.stderr)
    return outcome
