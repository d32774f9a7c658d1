"""Whether a grading's checks are shared, and which runs where.

Shared only in a grading's own process (the runner's child) with the checklist, and none of
what needs the checks in one process: --perf (it times on this process's threads), pytest's
options (-x stops at the first failure, -s prints straight to the terminal), checks asked to
run first (`nox -s mutants`), nor a request with `shared` off (the self-tests, which grade
both ways to compare). And only once the first check has run: the learner's file is
then imported once and the suite's module fixtures (Triton's engine) are set up once, and the
worker starts from that state, so what the file prints at import shows once. Then only where
fork is safe (Linux, CUDA not initialised: on a GPU the kernels are compiled and fast anyway),
with the file imported without error (every check would fail at once).

Which check runs where is fixed, not balanced by time as it goes: after the first, the worker
runs every second check (the 3rd, 5th, ...) and this process the others, so that code which
keeps state from one check to the next (a cache, a counter) meets the same checks in the same
order on every run, whatever the machine's load.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from norm_katas.engine.grading import Grading


def asked(grading: Grading, session: pytest.Session) -> bool:
    """Whether the suite asks to share its checks, and the grading allows it."""
    request, items = grading.handed, session.items
    if request is None or grading.request is None or grading.report is None:
        return False  # pytest run by hand, or not one kata's suite: pytest's own loop
    if not request.shared or not request.checklist or request.perf:
        return False
    if request.pytest_args or request.first:
        return False
    if session.testsfailed or session.config.option.collectonly or len(items) < 3:
        return False
    from norm_katas.checks.suite import declared

    return declared(getattr(items[0], "module", None)).shards >= 2


def still_safe(grading: Grading, session: pytest.Session) -> bool:
    """After the first check: whether a worker may be forked now."""
    from norm_katas.runtime.processes import fork_is_safe

    if session.shouldstop or session.shouldfail or grading.grader_errors:
        return False
    report = grading.report
    if report is None or report.load_error or not grading.learners.loaded:
        return False
    return fork_is_safe() and capture_replaceable(session.config)


def split(items: list[pytest.Item]) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """The checks after the first: (this process's, the worker's)."""
    return items[1::2], items[2::2]


def capture_replaceable(config: pytest.Config) -> bool:
    """Whether the worker can capture into files of its own. pytest's capture writes a check's
    output to temporary files; after a fork both processes would share them (and their
    offsets), each reading and truncating what the other wrote."""
    capman = config.pluginmanager.getplugin("capturemanager")
    if capman is None or getattr(capman, "_global_capturing", None) is None:
        return True  # nothing captured
    capture = sys.modules.get("_pytest.capture")
    return hasattr(capture, "_get_multicapture") and hasattr(capman, "_method")
