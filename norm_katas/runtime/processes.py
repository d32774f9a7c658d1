"""The processes a grading runs in: whether one may be forked, how one ended, and where an
exception was raised, in words for a message; a child's exit awaited, a process group killed,
and this process ended."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import traceback
from typing import NoReturn


def fork_is_safe() -> bool:
    """Whether a child may be forked from this process rather than started afresh."""
    if sys.platform != "linux" or os.environ.get("NORM_KATAS_SPAWN"):
        return False  # macOS frameworks and Windows do not survive fork without exec
    torch = sys.modules.get("torch")
    return torch is None or not torch.cuda.is_initialized()


def exit_status(status: int | None) -> str:
    """How a process ended, for a message: 'exit status 1', 'killed by SIGKILL, out of memory?'."""
    if status is None:
        return "still running"
    if status < 0:
        with contextlib.suppress(ValueError):
            name = signal.Signals(-status).name
            return f"killed by {name}" + (", out of memory?" if name == "SIGKILL" else "")
    return f"exit status {status}"


def cause(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".strip()


def where(e: BaseException) -> str:
    """The last frames of a traceback, the grader's own or torch's: where to look."""
    return "".join(traceback.format_exception(type(e), e, e.__traceback__, limit=-4))


def exit_process(code: int) -> NoReturn:
    """End this process without the interpreter's shutdown: Triton's bindings, which
    torch._dynamo imports, print hundreds of lines of false "leaked" warnings there."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def exit_fd(pid: int) -> int | None:
    """A file descriptor that becomes readable when the child `pid` exits (Linux 5.3 on)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def kill_group(pid: int) -> None:
    """Kill `pid` and its process group (all it started), and reap it."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def loopback_interface() -> str | None:
    """The loopback interface's name ("lo", "lo0"), for GLOO_SOCKET_IFNAME: left to itself,
    gloo takes the address the hostname resolves to, often one the network can reach."""
    with contextlib.suppress(OSError):
        names = [name for _, name in socket.if_nameindex()]
        return next((n for n in ("lo", "lo0") if n in names), None)
    return None
