"""A grading's child started and waited for: forked from this process where that is safe, else
a fresh interpreter (`python -m norm_katas _child`); killed with all it started when the
caller cancels or when no check finishes for too long (a stall).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from norm_katas.content import registry
from norm_katas.engine.request import GRADER_FAILED
from norm_katas.engine.runner.child import child_main
from norm_katas.runtime import processes

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from norm_katas.engine.request import Request
    from norm_katas.runtime.limits import Frame


class Cancelled:
    """A grading stopped because the caller's cancel() said so (watch mode: a new save)."""


@dataclass
class Stalled:
    """A grading stopped for making no progress, and where its main thread was then."""

    seconds: float
    frames: list[Frame] | None  # innermost first; None where the process could not say


def run_child(
    request: Request,
    scratch: Path,
    out: TextIO,
    limit: float,
    cancel: Callable[[], bool] | None = None,
) -> int | Stalled | Cancelled:
    """The child's exit code (negative: killed by that signal), Stalled if no check finished
    for `limit` seconds (the child touches the report after each), or Cancelled."""
    assert request.report_json is not None
    report = request.report_json
    for stream in (sys.stdout, sys.stderr, out):
        stream.flush()
    if not processes.fork_is_safe():
        handed = report.with_name("request.json")  # the request, as data: nothing to parse
        handed.write_text(request.to_json())
        command = [sys.executable, "-m", "norm_katas", "_child", str(handed), str(scratch)]
        # Started in the repository, so that `-m norm_katas` imports; child_main moves to scratch.
        child = subprocess.Popen(
            command, cwd=registry.ROOT, stdin=subprocess.DEVNULL, stdout=_fd(out),
            stderr=_fd(out), start_new_session=True,
        )  # fmt: skip
        return _wait(child.pid, limit, report, child, cancel)
    with warnings.catch_warnings():
        # Python 3.12+ warns on fork in a process with threads: importing torch starts an idle
        # helper thread, which the child never touches, and the parent initialised nothing.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns
        code = GRADER_FAILED
        try:
            os.setpgid(0, 0)  # its own process group, so it can be stopped with all it started
            signal.signal(signal.SIGINT, signal.default_int_handler)
            _redirect(out)
            code = child_main(request, scratch)
        except BaseException as e:  # the grader's own failure: the parent reports it
            report.with_suffix(".crash").write_text(processes.where(e))
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    with contextlib.suppress(OSError):  # also here, so a kill at once reaches the whole group
        os.setpgid(pid, pid)
    return _wait(pid, limit, report, cancel=cancel)


def _fd(out: TextIO) -> int | None:
    return None if out in (sys.stdout, sys.stderr) else out.fileno()


def _redirect(out: TextIO) -> None:
    """The learner's code reads no keystrokes (watch mode reads them); output goes to `out`."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    if out not in (sys.stdout, sys.stderr):
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)


def _wait(
    pid: int,
    limit: float,
    report: Path,
    process: subprocess.Popen | None = None,
    cancel: Callable[[], bool] | None = None,
) -> int | Stalled | Cancelled:
    progress, seen, polls = time.monotonic(), 0.0, 0
    exited = processes.exit_fd(pid)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                if process is not None:
                    process.returncode = os.waitstatus_to_exitcode(status)
                return os.waitstatus_to_exitcode(status)
            polls += 1
            # A grading whose report is complete is let finish: its verdict is already out.
            if cancel is not None and polls % 10 == 0 and cancel() and not _finished(report):
                processes.kill_group(pid)
                return Cancelled()
            if polls % 50 == 0:  # twice a second: has a check finished since?
                with contextlib.suppress(OSError):
                    if (mtime := report.stat().st_mtime) != seen:
                        progress, seen = time.monotonic(), mtime
                if time.monotonic() - progress > limit:
                    from norm_katas.runtime.limits import dump_stack

                    frames = dump_stack(pid, report.with_suffix(".stack"))
                    processes.kill_group(pid)
                    return Stalled(limit, frames)
            if exited is None:
                time.sleep(0.01)
            else:  # the poll, cut short when the child exits: each verdict half a poll sooner
                select.select([exited], [], [], 0.01)
    except BaseException:  # Ctrl-C in watch mode: the child goes with the parent
        processes.kill_group(pid)
        raise
    finally:
        if exited is not None:
            os.close(exited)


def _finished(report: Path) -> bool:
    try:
        return bool(json.loads(report.read_text()).get("finished"))
    except (OSError, ValueError):  # not written yet, or being written
        return False
