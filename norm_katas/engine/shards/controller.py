"""The controller: the grading's own process, when a suite's checks are shared.

It runs the first check, forks the worker (scheduling.py says when and which checks go where),
runs its own share, and takes in the worker's checks between its own, while pytest captures
nothing: the checklist then prints in the checks' order, each line once every check above it
has ended. The report, its file and the exit status stay this process's, as in one process.

Stopping: checks that keep timing out (counted across both processes) or the grader's own
error stop the grading, and the worker with it. A worker that dies while running the learner's
code (os._exit, a crash) ends the grading as it would have ended in one process: this process
ends the same way, and the runner says the grading ended abruptly.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import warnings
from typing import TYPE_CHECKING, NoReturn

import pytest

from norm_katas.engine.shards import scheduling, worker
from norm_katas.runtime.limits import TRITON_SLOW

if TYPE_CHECKING:
    from norm_katas.engine.grading import Grading
    from norm_katas.engine.report import Check


def run(session: pytest.Session, grading: Grading) -> bool:
    """pytest_runtestloop for a suite that asked to share its checks (scheduling.asked)."""
    items = session.items
    _run(items[:1], items[1])
    if not scheduling.still_safe(grading, session):
        _run(items[1:])  # in turn, as pytest's own loop would
        return True
    mine, theirs = scheduling.split(items)
    read, write = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads: runner/launch.py
        pid = os.fork()
    if pid == 0:
        os.close(read)
        worker.work(session, grading, theirs, write)
    os.close(write)
    controller = Controller(session, grading, items, read, pid)
    try:
        controller.run(mine)
    finally:
        controller.close()
    return True


def _run(items: list[pytest.Item], after: pytest.Item | None = None) -> None:
    """pytest's own loop over `items`, then `after` (None: the session ends with the last)."""
    for i, item in enumerate(items):
        nextitem = items[i + 1] if i + 1 < len(items) else after
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        _raise_if_stopped(item.session)


def _raise_if_stopped(session: pytest.Session) -> None:
    if session.shouldfail:
        raise session.Failed(session.shouldfail)
    if session.shouldstop:
        raise session.Interrupted(session.shouldstop)


class Controller:
    def __init__(
        self, session: pytest.Session, grading: Grading, items: list[pytest.Item], fd: int, pid: int
    ) -> None:
        self.session = session
        self.grading = grading
        self.fd = fd
        self.pid: int | None = pid  # None once reaped
        self.order = [item.nodeid for item in items]
        self.shown = 1  # checks printed, in order: the first ran before the fork
        self.ended: set[str] = set()
        self.worker_done = False
        grading.in_order = self
        if grading.printer is not None and grading.report is not None:
            grading.printer.running(grading.checks[self.order[1]], grading.report)

    def run(self, mine: list[pytest.Item]) -> None:
        for i, item in enumerate(mine):
            nextitem = mine[i + 1] if i + 1 < len(mine) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if self.session.shouldstop or self.session.shouldfail:
                break
            self.take(wait=False)
            if self.session.shouldstop:
                break
        else:
            self.take(wait=True)
        _raise_if_stopped(self.session)

    def close(self) -> None:
        """The worker stopped, if it still runs (the grading stopped), and reaped; the checks
        that ended after one that never ran printed all the same."""
        self.grading.in_order = None
        printer, report = self.grading.printer, self.grading.report
        if printer is not None and report is not None and not self.grading.grader_errors:
            for nodeid in self.order[self.shown :]:
                if nodeid in self.ended:
                    printer.check(self.grading.checks[nodeid], report)
            printer.erase()
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self.pid = None
        os.close(self.fd)

    # -- the worker's checks ---------------------------------------------------------------
    def take(self, wait: bool) -> None:
        """The worker's messages that have come (wait: all of them, to its last)."""
        while not self.worker_done:
            if not wait and not select.select([self.fd], [], [], 0)[0]:
                return
            message = worker.receive(self.fd)
            if message is None:
                self._worker_died()
            kind, *rest = message
            if kind == "check":
                self._apply(*rest)
                if self.session.shouldstop:
                    return
            elif kind == "interrupted":  # as the signal would have stopped one process
                self.worker_done = True
                self._reap()
                raise KeyboardInterrupt
            elif kind == "exit":
                self.worker_done = True
                self._reap()
                raise pytest.exit.Exception(rest[0], rest[1])
            elif kind == "crash":
                self.worker_done = True
                cause = f"the process that ran half of the checks failed:\n{rest[0]}"
                self.grading.grader_errors.append(cause)
                self.session.shouldstop = "the grader cannot grade here"
            else:  # "end"
                self.worker_done = True
                self._reap()

    def _apply(
        self, nodeid: str, check: Check, timeouts: int, busy: int, errors: list[str]
    ) -> None:
        grading = self.grading
        vars(grading.checks[nodeid]).update(vars(check))
        for error in errors:
            if error not in grading.grader_errors:
                grading.grader_errors.append(error)
                self.session.shouldstop = "the grader cannot grade here"
        for n in range(timeouts):
            grading._count_timeout(n < busy, TRITON_SLOW in check.message)
        self.ended_check(nodeid)

    def _reap(self) -> int:
        assert self.pid is not None
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        return os.waitstatus_to_exitcode(status)

    def _worker_died(self) -> NoReturn:
        """Gone without its last message: the learner's code ended it. This process ends as
        it did, and the runner says the grading ended abruptly while running that code."""
        code = self._reap()
        worker.flush_output()
        if code < 0:
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code if code >= 0 else 1)

    # -- the checklist, in order -----------------------------------------------------------
    def ended_check(self, nodeid: str) -> None:
        """A check ended, here or in the worker: print what can now be printed in order, then
        show the check the next line waits for (it runs now, in one process or the other)."""
        self.ended.add(nodeid)
        grading = self.grading
        printer, report = grading.printer, grading.report
        if printer is None or report is None:
            return
        if grading.grader_errors:
            printer.erase()  # the runner says why the grading stopped
            return
        if self.shown < len(self.order) and self.order[self.shown] not in self.ended:
            return  # the line shown already says which check the checklist waits for
        while self.shown < len(self.order) and self.order[self.shown] in self.ended:
            printer.check(grading.checks[self.order[self.shown]], report)
            self.shown += 1
        if self.shown < len(self.order):
            printer.running(grading.checks[self.order[self.shown]], report)
