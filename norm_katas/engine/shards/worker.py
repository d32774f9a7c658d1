"""The forked worker: runs its share of the checks and sends each back as it ends.

It prints nothing (the controller prints the checklist) and writes no report, only touches the
report's file after each check, the runner's sign of progress, as the controller does. What it
sends through its pipe (`send`), one pickled tuple each: ("check", node id, the Check, timeouts
and busy timeouts in it, the grader's errors so far) after each check, then ("end",); or what
stopped its run as it would have stopped one process's: ("interrupted",) for a SIGINT,
("exit", message, status) for pytest.exit(), ("crash", where) for the grader's own failure.
It ends with os._exit: the session, its report and its exit status are the controller's.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import signal
import struct
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    from norm_katas.engine.grading import Grading

_LENGTH = struct.Struct("!I")
_PR_SET_PDEATHSIG = 1


def work(session: pytest.Session, grading: Grading, items: list[pytest.Item], fd: int) -> NoReturn:
    """Run `items` in turn, sending each check back on `fd`; never returns."""
    code = 0
    try:
        _die_with_parent()
        grading.become_worker()
        _own_capture(session.config)
        for i, item in enumerate(items):
            timeouts, busy = grading.timeouts, grading.busy_timeouts
            nextitem = items[i + 1] if i + 1 < len(items) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            check = grading.checks[item.nodeid]
            errors = list(grading.grader_errors)
            timed_out = (grading.timeouts - timeouts, grading.busy_timeouts - busy)
            send(fd, ("check", item.nodeid, check, *timed_out, errors))
            if session.shouldstop or session.shouldfail:
                break
        send(fd, ("end",))
    except KeyboardInterrupt:  # a SIGINT (the learner's code sent it): it stops the grading
        send(fd, ("interrupted",))
    except pytest.exit.Exception as e:  # pytest.exit() in the learner's code: so does that
        send(fd, ("exit", e.msg, e.returncode))
    except BaseException as e:  # the grader's own failure here: the controller reports it
        from norm_katas.engine.request import GRADER_FAILED
        from norm_katas.runtime.processes import where

        code = GRADER_FAILED
        with contextlib.suppress(BaseException):
            send(fd, ("crash", where(e)))
    finally:
        flush_output()
        os._exit(code)


def flush_output() -> None:
    """What this process printed, out before os._exit, which flushes nothing."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def send(fd: int, message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message)
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def receive(fd: int) -> tuple[Any, ...] | None:
    """The next message on `fd`, waiting for it; None once the worker is gone without one."""
    head = _read(fd, _LENGTH.size)
    if head is None:
        return None
    body = _read(fd, _LENGTH.unpack(head)[0])
    return None if body is None else pickle.loads(body)


def _read(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _die_with_parent() -> None:
    """Linux: killed when the controller ends, whatever ends it (the learner's os._exit in one
    of its checks), rather than running on to a pipe nobody reads."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _own_capture(config: pytest.Config) -> None:
    """pytest's capture into temporary files of this process's own (scheduling.py says why):
    a new set, started and suspended as the shared one was between checks. The shared files
    are left unread, and closed only here."""
    capman = config.pluginmanager.getplugin("capturemanager")
    if capman is None or capman._global_capturing is None:
        return
    from _pytest.capture import _get_multicapture

    capman._global_capturing = _get_multicapture(capman._method)
    capman._global_capturing.start_capturing()
    capman._global_capturing.suspend_capturing()
