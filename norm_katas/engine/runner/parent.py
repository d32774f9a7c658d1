"""The parent's side of a grading: the child started, and how it ended made a verdict.

grade() hands the request to a child (launch) and reads the report it leaves; the exit code
is the checklist's own, or, where the child ended otherwise (a crash, a stall, pytest's own
error, nothing selected), says why in the learner's terms or as the grader's failure.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import select
import shlex
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from norm_katas.content import registry
from norm_katas.engine import suggest
from norm_katas.engine.request import (
    CHECK_TIMEOUT_S,
    GRADER_FAILED,
    NOT_SOLVED,
    SOLVED,
    USAGE,
    Request,
)
from norm_katas.engine.runner.launch import Cancelled, Stalled, run_child
from norm_katas.runtime import processes

if TYPE_CHECKING:
    from collections.abc import Callable

    from norm_katas.engine.report import Report

# A grading in which no check finishes for this long (or twice a check's own wall-clock net,
# if longer) is stopped: a safety net for what a check's limit cannot interrupt (a hang inside C).
GRADING_LIMIT_S = 300
PYTEST_INTERRUPTED, PYTEST_USAGE_ERROR, PYTEST_NO_TESTS = 2, 4, 5


class GraderError(Exception):
    """The grader itself cannot grade: not the learner's fault. str() is the message."""


@dataclass
class Graded:
    code: int
    report: Report | None
    cancelled: bool = False  # stopped by the caller's cancel(): no verdict, nothing to record
    proof: Any = None  # the test-writing mode's verdict (engine.proving.verdict.Verdict)


def environment() -> str:
    """'torch 2.13.0+cpu, Python 3.11.7, Linux x86_64': what a bug report needs."""
    torch = sys.modules.get("torch")
    version = getattr(torch, "__version__", "not imported")
    python = platform.python_version()
    return f"torch {version}, Python {python}, {platform.system()} {platform.machine()}"


def grader_failed(cause: str, details: str = "", whose: str = "") -> str:
    """The message for a grader failure: the cause, the versions, and where to look. `whose`:
    whose problem it may be, where that is not the grader's or its environment's alone."""
    lines = [
        f"norm-katas could not grade: {cause}",
        whose or "This is a problem with the grader or its environment, not with your code.",
        f"  environment: {environment()} ({sys.executable})",
        "  where to look: 'When the grader itself fails' in docs/troubleshooting.md; "
        "report it with this message if that does not help.",
    ]
    if details:
        lines += ["", details.rstrip()]
    return "\n".join(lines)


def missing_requirements(kata: registry.Kata, where: str = suggest.TERMINAL) -> str | None:
    """The learner-facing message when a package this kata needs is not installed."""
    for requirement in kata.requires:
        name = requirement.split(";")[0].strip()
        for sep in "<>=!~[ ":
            name = name.split(sep)[0]
        if importlib.util.find_spec(name) is None:
            how = suggest.install(requirement, kata.name, sys.executable, where)
            return (
                f"The {kata.name} kata needs {name}, which is not installed for this Python "
                f"({sys.executable}). {how}"
            )
    return None


def grade(
    request: Request,
    *,
    out: TextIO | None = None,
    limit: float = GRADING_LIMIT_S,
    cancel: Callable[[], bool] | None = None,
) -> Graded:
    """Grade in a child process; returns the exit code and the report (None if none was made).

    The checklist goes to `out` (default: this process's stdout and stderr). `cancel` is asked
    about ten times a second while the child runs; when it says True the child and all it
    started are killed, and the outcome is `cancelled`, with no report.
    """
    from norm_katas.engine.report import Report
    from norm_katas.runtime.limits import wall_net

    out = out or sys.stderr
    if reason := missing_requirements(request.kata, request.door):
        print(reason, file=out, flush=True)
        return Graded(GRADER_FAILED, None)
    limit = max(limit, 2 * wall_net(request.timeout) + 60)  # a check's own limits act first
    # ignore_cleanup_errors: a rank killed with its grading may still be writing its log there.
    with tempfile.TemporaryDirectory(prefix="norm-katas-", ignore_cleanup_errors=True) as tmp:
        path = Path(tmp) / "report.json"
        scratch = Path(tmp) / "work"  # the learner's code runs here: see child_main
        scratch.mkdir()
        # The child writes its report here; the user's --report-json gets a copy.
        status = run_child(replace(request, report_json=path), scratch, out, limit, cancel)
        if isinstance(status, Cancelled):
            return Graded(NOT_SOLVED, None, cancelled=True)
        report = Report.from_json(json.loads(path.read_text())) if path.exists() else None
        crash = path.with_suffix(".crash")
        details = crash.read_text() if crash.exists() else ""
        if request.report_json is not None and path.exists():
            try:  # checked at the door (request.resolve_report), but the folder may have gone
                shutil.copyfile(path, request.report_json)
            except OSError as e:
                print(f"The verdict was not written to {request.report_json}: {e}", file=out)
    if hasattr(signal, "SIGPIPE") and status == -signal.SIGPIPE:
        if _reader_gone(out):
            # Whoever read the checklist stopped reading (`| head`): nothing to say, and an
            # unfinished report that is no attempt to record.
            return Graded(NOT_SOLVED, None)
        cause = "its process wrote to a pipe that nobody reads (SIGPIPE) and was stopped."
        print(grader_failed(cause, details), file=out, flush=True)
        return Graded(GRADER_FAILED, None)
    return Graded(_verdict(status, report, request, details, out), report)


def _verdict(
    status: int | Stalled, report: Report | None, request: Request, details: str, out: TextIO
) -> int:
    """The exit code of a grading, and what to say when it is not the checklist's own."""
    from norm_katas.engine.report import exit_code

    def say(text: str) -> None:
        print(text, file=out, flush=True)

    if isinstance(status, Stalled):
        return _stalled(status, out)
    if report is None:
        if status == PYTEST_USAGE_ERROR:
            return USAGE  # pytest has said why (--device mps without one, ...)
        cause = f"the grading process ended ({processes.exit_status(status)}) before any check ran."
        say(grader_failed(cause, details))
        return GRADER_FAILED
    if errors := report.grader_errors:
        whose = ""
        if request.timeout < CHECK_TIMEOUT_S:
            whose = (
                f"Not a problem with your code: the grader, its environment, or a --timeout of "
                f"{request.timeout:g} CPU seconds, less than the default {CHECK_TIMEOUT_S:g}, "
                "that leaves a check too little time (see below)."
            )
        say(grader_failed("its checks could not run to the end.", "\n\n".join(errors), whose))
        return GRADER_FAILED
    if not report.finished:
        ended = processes.exit_status(status)
        say(
            f"\nThe grader's process ended abruptly ({ended}) while running your code.\n"
            "Does your file call os._exit(), crash the interpreter, or use up all the memory? "
            "Remove that and grade again."
        )
        return NOT_SOLVED
    if status == PYTEST_NO_TESTS or not report.checks:
        selection = request.selection
        if status == PYTEST_USAGE_ERROR and selection:  # pytest could not read it, and said so
            chosen = (("-k", request.keyword), ("-m", request.marker))
            shown = " ".join(f"{flag} {shlex.quote(value)}" for flag, value in chosen if value)
            say(
                f"{shown} is not an expression pytest can read (its message is above): nothing "
                "was graded. Join words with and, or, not and parentheses, as in "
                '-k "affine and not cuda" or -m "not parity".'
            )
            return USAGE
        matched = f"No check matched {selection}" if selection else "No check ran"
        picks = [
            "-k picks the checks whose name or checklist line holds a word, any case (-k affine, "
            "-k cuda)"
        ]
        if request.marker:
            picks.append("-m the checks with a marker (-m parity: the torch-parity checks)")
        without = "them" if len(picks) > 1 else "it"
        say(
            f"{matched}: nothing was graded. {'; '.join(picks)}; grade without {without} to "
            "see every check."
        )
        return USAGE
    if status not in (SOLVED, NOT_SOLVED, PYTEST_INTERRUPTED):
        say(grader_failed(f"pytest ended with status {status} inside the grader."))
        return GRADER_FAILED
    return exit_code(report, request.strict)  # what the child's plugin ended with, too


def _stalled(stalled: Stalled, out: TextIO) -> int:
    """No check finished for a long while: the learner's code was stuck only if it is where the
    grading was; anywhere else it is the grader's (or the machine's) problem."""
    from norm_katas.runtime.limits import learner_site

    seconds = f"{stalled.seconds:.0f} s"
    if stalled.frames is None:
        cause = (
            f"no check finished for {seconds}, so the grading was stopped; where it was stuck "
            "is unknown on this system."
        )
        print(grader_failed(cause), file=out, flush=True)
        return GRADER_FAILED
    site = learner_site(stalled.frames)
    if site is not None:
        print(
            f"\nNo check finished for {seconds}, so the grading was stopped. It was in your "
            f"code at {site}: a call that never returns (one enormous torch operation, a "
            "wait inside C)?",
            file=out,
            flush=True,
        )
        return NOT_SOLVED
    stack = "\n".join(f"  {frame}" for frame in stalled.frames[:8])
    cause = (
        f"no check finished for {seconds}, so the grading was stopped, in the grader's own work "
        "(your code was not running). The machine may be too busy, or the grader is stuck."
    )
    print(grader_failed(cause, f"Where it was, innermost first:\n{stack}"), file=out, flush=True)
    return GRADER_FAILED


def _reader_gone(out: TextIO) -> bool:
    """Whether the child's output is a pipe whose reader has closed it: its SIGPIPE came from
    there, not from some other pipe, which would be the grader's failure. The child writes to
    `out`, or to this process's stdout and stderr when `out` is one of them (launch.run_child)."""
    streams = (sys.stdout, sys.stderr) if out in (sys.stdout, sys.stderr) else (out,)
    try:
        poller = select.poll()
        for stream in streams:
            poller.register(stream.fileno(), select.POLLOUT)
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll, or no file descriptor
        return True  # cannot tell: taken for the reader's doing, as `| head` is the usual one
