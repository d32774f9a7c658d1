"""Time limits that measure the learner's code, not the machine.

A check's limit (--timeout, default 10 s) counts the CPU time of the grading process's main
thread, where the learner's code runs. A busy machine (a compile, a video call, other gradings)
stretches a check in wall-clock time, but does not make it use more CPU. The main thread only:
torch's OpenMP workers spin while they wait for work, so on a machine with many cores the whole
process's CPU time counts the same work many times over.

A wall-clock limit stays as a safety net, for code that burns no CPU (a sleep, a lock): see
`wall_net`. When either runs out, the interrupted stack says whose time it was: if the learner's
code is on it, the check fails as the learner's timeout, naming the line; if not (an import,
FakeTensorMode, pytest, waiting for the SyncBatchNorm ranks), the check gets the same again once,
and if it runs out in the grader's work again, the grading ends as the grader's own failure.

The same evidence serves other processes: `process_cpu` reads a process's CPU time (Linux), and
`dump_stack` asks one where it is (faulthandler, registered by `register_dump`).
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import itertools
import linecache
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any

from norm_katas.runtime import CHECK_TIMEOUT_S
from norm_katas.runtime.outcomes import GraderTooSlow, TimedOut

# Wall-clock net: code that burns no CPU is stopped after this many times its CPU budget.
WALL_FACTOR, MIN_WALL_S = 6, 60.0
# The signal a grading process or a SyncBatchNorm rank answers with its stack (Unix only).
DUMP_SIGNAL = getattr(signal, "SIGUSR1", None)


def wall_net(cpu_s: float) -> float:
    """The wall-clock limit that goes with a CPU budget of cpu_s seconds."""
    return max(MIN_WALL_S, WALL_FACTOR * cpu_s)


# -- where a process is ---------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str

    def __str__(self) -> str:
        from norm_katas.runtime.loader import display_path

        return f"{display_path(Path(self.file))} line {self.line}, in {self.function}"


@dataclass(frozen=True)
class Site:
    """The innermost frame of the learner's code on a stack."""

    file: str
    line: int

    def __str__(self) -> str:
        from norm_katas.runtime.loader import display_path

        code = linecache.getline(self.file, self.line).strip()
        return f"{display_path(Path(self.file))} line {self.line}" + (f": {code}" if code else "")


def is_learner_file(filename: str) -> bool:
    """A file of the learner's (or a catalogue file standing in for one): not torch's, a
    library's, the standard library's, the suites' or the grader's. Generated code (`<string>`)
    does not count: torch and dataclasses make their own."""
    if filename.startswith("<"):
        return False
    from norm_katas.runtime.tracing import is_learner_code

    return is_learner_code(filename)


def learner_site(frames: Iterable[Frame]) -> Site | None:
    """Where the learner's code was, on a stack given innermost first: its innermost frame.
    None if it is not on the stack, or if what it called is importing a module on its own
    behalf (torch loads torch._dynamo on first use of FakeTensorMode): that time is the
    grader's setting up, not the learner's code running."""
    inner: list[Frame] = []
    for frame in frames:
        if is_learner_file(frame.file):
            lazy = any(_importing(f) for f in inner) and not _importing(inner[-1])
            return None if lazy else Site(frame.file, frame.line)
        inner.append(frame)
    return None


# A kernel past its time in Triton's interpreter: Python runs it, a program at a time.
TRITON_SLOW = (
    "Your kernel was running in Triton's interpreter, which executes it in Python one program "
    "at a time, and a tl.reduce or tl.associative_scan with a combine function of your own one "
    "element at a time: a loop that never ends, or work that is fast on a GPU but too slow "
    "here. Prefer tl.max, tl.sum and tl.cumsum, or grade with a larger --timeout (CPU seconds "
    "per check)."
)


def _interpreted(frames: list[Frame]) -> bool:
    """Whether the stack runs through Triton's interpreter."""
    return any(f.file.replace("\\", "/").endswith("triton/runtime/interpreter.py") for f in frames)


def _importing(frame: Frame) -> bool:
    return frame.file.startswith("<frozen importlib")


def python_frames(frame: FrameType | None) -> list[Frame]:
    """A live stack, innermost first."""
    frames = []
    while frame is not None:
        code = frame.f_code
        frames.append(Frame(code.co_filename, frame.f_lineno or 0, code.co_name))
        frame = frame.f_back
    return frames


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user and system, all threads) a process has used; None where the system
    does not say (/proc is Linux's)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()  # after the command name, which may hold spaces
    try:
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError, OSError):
        return None


class Watch:
    """A process's CPU and wall-clock seconds since the watch began."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.cpu0, self.wall0 = process_cpu(pid), time.monotonic()

    def cpu(self) -> float | None:
        now = process_cpu(self.pid)
        return None if now is None or self.cpu0 is None else now - self.cpu0

    def wall(self) -> float:
        return time.monotonic() - self.wall0


def register_dump(path: Path) -> IO[str] | None:
    """Answer DUMP_SIGNAL by writing every thread's stack to path (faulthandler: it works even
    while the main thread is stuck inside C). Returns the open file, to be kept open."""
    if DUMP_SIGNAL is None:
        return None
    file = path.open("w")
    faulthandler.register(DUMP_SIGNAL, file=file, all_threads=True, chain=False)
    return file


_BLOCK = re.compile(r"^(?:Current thread|Thread) 0x[0-9a-f]+", re.M)
_LINE = re.compile(r'^\s*File "(.*)", line (\d+) in (.*)$', re.M)


def dump_stack(pid: int, path: Path, wait_s: float = 5.0) -> list[Frame] | None:
    """Ask a process that called register_dump(path) where its main thread is: its frames,
    innermost first, or None where it cannot say (no such signal, or no answer in time)."""
    if DUMP_SIGNAL is None:
        return None
    try:
        os.kill(pid, DUMP_SIGNAL)
    except OSError:
        return None
    deadline, size = time.monotonic() + wait_s, -1
    while time.monotonic() < deadline:  # a busy machine may take a while to run the handler
        time.sleep(0.05)
        with contextlib.suppress(OSError):
            now = path.stat().st_size
            if now and now == size:
                return main_thread_frames(path.read_text(errors="replace"))
            size = now
    return None


def main_thread_frames(dump: str) -> list[Frame] | None:
    """The main thread's frames in a faulthandler dump: the block that did not start in
    threading's bootstrap (every other Python thread does)."""
    starts = [m.start() for m in _BLOCK.finditer(dump)] + [len(dump)]
    for begin, end in itertools.pairwise(starts):
        frames = [Frame(m[1], int(m[2]), m[3].strip()) for m in _LINE.finditer(dump[begin:end])]
        if frames and not any(_threading_bootstrap(f) for f in frames[-3:]):
            return frames
    return None


def _threading_bootstrap(frame: Frame) -> bool:
    return frame.function.startswith("_bootstrap") and Path(frame.file).name == "threading.py"


# -- a check's budget -----------------------------------------------------------------------


class Budget:
    """One check's time limit: `cpu_s` seconds of the main thread's CPU time while the check
    runs, and wall_net(cpu_s) seconds of wall-clock time.

    `start()` and `stop()` bracket the grader's work that counts (a check's setup, call and
    teardown; not pytest's report of it). method "signal" (Unix): an alarm, re-armed for the
    CPU time still left, interrupts the main thread. "thread" (Windows, or --timeout-method
    thread): a watchdog thread raises the exception in the main thread asynchronously; where
    the main thread's CPU clock cannot be read, the process's counts.
    """

    def __init__(self, cpu_s: float, check: str, method: str = "signal") -> None:
        self.cpu_s, self.wall_s, self.check = cpu_s, wall_net(cpu_s), check
        self.cpu_limit, self.wall_limit = self.cpu_s, self.wall_s
        self.cpu_used = self.wall_used = 0.0
        self.extended = False  # the grader's own work has had its second budget
        self.expired = False
        self.method = method if hasattr(signal, "setitimer") else "thread"
        self._since: tuple[float, float] | None = None  # (cpu, wall) when started
        self._previous: Any = None
        self._lock = threading.RLock()  # the alarm's handler runs on the thread it interrupts
        self._main = threading.main_thread().ident or 0
        self._clock: Callable[[], float] = time.thread_time
        self._wake = threading.Event()
        self._watchdog: threading.Thread | None = None
        if self.method == "thread":
            self._clock = _main_thread_clock()
        elif threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
        else:  # a signal reaches only the main thread: time it from another thread instead
            self.method, self._clock = "thread", _main_thread_clock()

    # -- bracketing the work that counts
    def start(self) -> None:
        with self._lock:
            if self._since is not None or self.expired:
                return
            self._since = (self._clock(), time.monotonic())
        if self.method == "signal":
            self._arm()
        elif self._watchdog is None:
            self._watchdog = threading.Thread(target=self._watch, daemon=True)
            self._watchdog.name = f"norm-katas time limit of {self.check}"
            self._watchdog.start()
        else:
            self._wake.set()

    def stop(self) -> None:
        if self.method == "signal":
            signal.setitimer(signal.ITIMER_REAL, 0)
        with self._lock:
            if self._since is not None:
                self.cpu_used, self.wall_used = self._used()
                self._since = None

    def close(self) -> None:
        """The check is over: no more alarms, the previous handler back."""
        self.stop()
        self.expired = True
        self._wake.set()
        if self.method == "signal" and self._previous is not None:
            signal.signal(signal.SIGALRM, self._previous)

    def _used(self) -> tuple[float, float]:
        cpu, wall = self.cpu_used, self.wall_used
        if self._since is not None:
            cpu += self._clock() - self._since[0]
            wall += time.monotonic() - self._since[1]
        return cpu, wall

    def _left(self) -> float:
        """Wall seconds before a limit could run out: the main thread cannot use more than a
        second of CPU per second."""
        cpu, wall = self._used()
        return max(min(self.cpu_limit - cpu, self.wall_limit - wall), 0.01)

    # -- signal method
    def _arm(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, self._left())

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        if self._since is None or self.expired:
            return  # a late alarm, after the work it was set for
        error = self._verdict(python_frames(frame))
        if error is not None:
            self.stop()
            self.expired = True
            raise error
        self._arm()

    # -- thread method
    def _watch(self) -> None:
        while not self.expired:
            with self._lock:
                running = self._since is not None
                delay = self._left() if running else None
            self._wake.wait(delay)
            self._wake.clear()
            with self._lock:
                if self.expired or self._since is None:
                    continue
                frame = sys._current_frames().get(self._main)
                error = self._verdict(python_frames(frame))
                if error is not None:
                    self.cpu_used, self.wall_used = self._used()
                    self._since = None
                    self.expired = True
                    _raise_in(self._main, error)

    # -- the verdict
    def _verdict(self, frames: list[Frame]) -> BaseException | None:
        """None while the limits hold (or after granting the grader's work more); else the
        exception that ends the check."""
        cpu, wall = self._used()
        by_cpu = cpu >= self.cpu_limit
        if not by_cpu and wall < self.wall_limit:
            return None
        site = learner_site(frames)
        if site is not None:
            if by_cpu:
                detail = f"it ran for {cpu:.1f} s of CPU time, and was still in your code at {site}"
                advice = "An infinite loop, or a very slow Python loop over elements?"
                if _interpreted(frames):
                    advice = TRITON_SLOW
            else:
                detail = (
                    f"it waited {wall:.0f} s, using only {cpu:.1f} s of CPU time, and was "
                    f"still in your code at {site}"
                )
                advice = "Does your code sleep, or wait for input or a lock?"
            message = f"this check did not finish in time: {detail}\n{advice}"
            return TimedOut(message, detail, busy=by_cpu)
        if not self.extended:  # the grader's own work: give it the same again, once
            self.extended = True
            self.cpu_limit += self.cpu_s
            self.wall_limit += self.wall_s
            return None
        where = str(frames[0]) if frames else "an unknown place"
        spent = (
            f"the check {self.check} did not finish, and its time went to the grader's own "
            f"work, not to your code: {cpu:.1f} s of CPU time and {wall:.0f} s in all, last at "
            f"{where}."
        )
        if self.cpu_s < CHECK_TIMEOUT_S:  # only --timeout lowers a check's limit
            return GraderTooSlow(
                f"{spent} --timeout {self.cpu_s:g} is less than the grader needs for its own "
                f"work in this check: grade with a larger --timeout, or without it (the default "
                f"is {CHECK_TIMEOUT_S:g} CPU seconds per check)."
            )
        return GraderTooSlow(
            f"{spent} The machine is too busy or too slow for the grader's limits: grade "
            f"again when it is quieter, or allow more with --timeout {2 * self.cpu_s:g}."
        )


def _main_thread_clock() -> Callable[[], float]:
    """The main thread's CPU clock, read from any thread; the process's where unavailable."""
    try:
        clock = time.pthread_getcpuclockid(threading.main_thread().ident or 0)
        time.clock_gettime(clock)
    except (AttributeError, OSError):
        return time.process_time
    return lambda: time.clock_gettime(clock)


def _raise_in(thread: int, error: BaseException) -> None:
    """Raise `error` in another thread at its next bytecode. CPython takes a class there, which
    it instantiates without arguments: a subclass that copies this instance."""
    base = type(error)

    def __init__(self: BaseException) -> None:
        BaseException.__init__(self, *error.args)
        self.__dict__.update(error.__dict__)

    cls = type(base.__name__, (base,), {"__init__": __init__, "__module__": base.__module__})
    set_async = ctypes.pythonapi.PyThreadState_SetAsyncExc
    set_async.argtypes = (ctypes.c_ulong, ctypes.py_object)
    set_async(thread, cls)
