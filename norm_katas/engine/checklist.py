"""The checklist: a kata's checks, in the order they are graded and listed, and what became
of each (passed, failed with its kind, message and hints, or skipped), from pytest's report
of each phase.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
import torch

from norm_katas.content import pristine, registry
from norm_katas.engine.report import (
    CORE,
    INFO,
    PARITY,
    Check,
    Outcome,
    Report,
    Tier,
    choose_hints,
    describe,
    explain,
    raised_at,
)
from norm_katas.engine.request import Request
from norm_katas.runtime import limits
from norm_katas.runtime.loader import NotThisCheck, display_path
from norm_katas.runtime.outcomes import Belongs, CannotGrade, RaisedInterrupt, raised_by_code

# A device check's title begins so; graded on the CPU it ran on simulated CUDA (fake_cuda).
ON_CUDA, SIMULATED_CUDA = "runs on CUDA", "runs on (simulated) CUDA"


def checklist(
    request: Request, device: torch.device, items: list[pytest.Item], left_out: list[pytest.Item]
) -> tuple[Report, dict[str, Check]]:
    """The kata's report with its checks, none run yet, and each by its node id. The interview
    core runs (and is listed) first, then torch parity, each in suite order; information-only
    reports last, apart from the checks. `items` are sorted so."""
    kata = request.kata
    report = Report(kata.name, kata.title, display_path(request.file), str(device))
    for item in left_out:  # by -k or -m
        if (tier := _tier(item)) != INFO:  # leaving out a report decides nothing
            report.deselected[tier] += 1
    tiers = {item.nodeid: _tier(item) for item in items}
    items.sort(key=lambda item: (CORE, PARITY, INFO).index(tiers[item.nodeid]))
    checks = {}
    for item in items:
        description, hints = describe(getattr(item, "function", None).__doc__, item.name)
        if device.type == "cpu" and description.startswith(ON_CUDA):
            # Graded on the CPU, the device checks run on simulated CUDA: say so, not "CUDA".
            description = SIMULATED_CUDA + description.removeprefix(ON_CUDA)
        if hasattr(item, "callspec"):
            description += f" [{item.callspec.id}]"
        broad = item.get_closest_marker("broad") is not None
        check = Check(item.name, description, hints, tier=tiers[item.nodeid], broad=broad)
        checks[item.nodeid] = check
        report.checks.append(check)
    return report, checks


def _tier(item: pytest.Item) -> Tier:
    if item.get_closest_marker("info") is not None:
        return INFO
    return PARITY if item.get_closest_marker("parity") is not None else CORE


def grader_error(call: pytest.CallInfo[Any]) -> str | None:
    """The grader's own failure in a check (it cannot grade here, or it is too slow): never
    the learner's."""
    if call.excinfo is not None and call.excinfo.errisinstance((CannotGrade, limits.GraderTooSlow)):
        return str(call.excinfo.value)
    return None


def interrupt_raised_fails() -> Generator[None, None, None]:
    """A phase of a check, where a KeyboardInterrupt raised by code fails the check as any
    exception would (outcomes.RaisedInterrupt), and one from a signal stops the run."""
    try:
        return (yield)
    except KeyboardInterrupt as e:
        if not raised_by_code(e):
            raise
        raise RaisedInterrupt(*e.args).with_traceback(e.__traceback__) from None


def record_outcome(
    check: Check,
    call: pytest.CallInfo[Any],
    result: pytest.TestReport,
    learner: Path,
    pitfalls: str = "",
) -> None:
    """What a phase of the check (setup, call, teardown) says about it: failed (with the kind,
    the message and the hints that fit it, `pitfalls` being the stub's section), skipped (with
    why), or passed."""
    if result.failed and call.excinfo is not None:
        check.outcome = Outcome.FAILED
        check.kind, check.message = explain(call.excinfo, learner)
        check.raised = raised_at(call.excinfo, learner)
        check.hints = choose_hints(
            check.hints, check.kind, check.message, pitfalls,
            missing=call.excinfo.errisinstance(NotThisCheck),
        )  # fmt: skip
        if call.excinfo.errisinstance(Belongs):
            check.belongs = call.excinfo.value.check
    elif result.skipped:
        check.outcome = Outcome.SKIPPED
        longrepr = result.longrepr
        check.message = longrepr[2].removeprefix("Skipped: ") if isinstance(longrepr, tuple) else ""
    elif result.when == "call" and result.passed:
        check.outcome = Outcome.PASSED


def stub_pitfalls(kata: registry.Kata) -> str:
    """The kata's stub's pitfalls section, or nothing where the stub cannot be read."""
    try:
        return pristine.split_pitfalls(pristine.text(kata))[1]
    except (pristine.StubError, OSError, UnicodeDecodeError):
        return ""
