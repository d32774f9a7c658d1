"""The edit-save-verdict loop shared by watch mode and the mock interview.

It regrades on every save of the watched file and on Enter, and stops on q or Ctrl-C. On a
terminal keys act at once (cbreak mode, restored on the way out); piped input is read by line.
A grading in progress is stopped by a new save (the new version is graded instead) or by q.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from norm_katas.engine.report.printer import HINT_KEY

POLL_S = 0.025  # a stat() of one file: cheap, and half the poll is on every save's verdict
# Editors write a file in steps (truncate, write; or write a copy, then rename it over), each
# a millisecond or less apart: grade once the file has not changed for SETTLE_S, and at most
# MAX_SETTLE_S after the save was seen. A step that comes later still stops the grading it
# started (stops_grading), and the loop grades the file as it is then.
SETTLE_S = 0.02
MAX_SETTLE_S = 1.0
QUIT = ("q", "quit", "exit")


class Keys:
    """Keys typed while the loop runs, read without blocking it."""

    def __init__(self) -> None:
        self.open = sys.stdin is not None and not sys.stdin.closed
        self.raw = False
        self.pending: str | None = None  # a key read during a grading, for the loop to act on

    @contextlib.contextmanager
    def cbreak(self) -> Iterator[Keys]:
        """Single keystrokes on a terminal, for as long as the loop runs."""
        if not (self.open and os.name == "posix" and sys.stdin.isatty()):
            yield self
            return
        import termios
        import tty

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        tty.setcbreak(fd)
        self.raw = True
        try:
            yield self
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
            self.raw = False

    def poll(self, timeout: float) -> str | None:
        """'q' to stop, '\\n' to grade now, another text, or None when nothing was typed."""
        if self.pending is not None:
            key, self.pending = self.pending, None
            return key
        if not self.open:
            time.sleep(timeout)
            return None
        if os.name == "nt":  # pragma: no cover - Windows consoles cannot select() on stdin
            import msvcrt

            end = time.monotonic() + timeout
            while time.monotonic() < end:
                if msvcrt.kbhit():
                    key = msvcrt.getwch()
                    return "\n" if key == "\r" else key.lower()
                time.sleep(0.02)
            return None
        import select

        ready, _, _ = select.select([sys.stdin], [], [], timeout)
        if not ready:
            return None
        if self.raw:
            text = os.read(sys.stdin.fileno(), 64).decode(errors="replace")
            if "\x03" in text:  # Ctrl-C as a byte: a terminal that does not turn it into SIGINT
                raise KeyboardInterrupt
            if "q" in text.lower():
                return "q"
            return "\n" if ("\n" in text or "\r" in text) else text.lower()
        line = sys.stdin.readline()
        if line == "":  # end of input: keep the clock and the file watch going
            self.open = False
            return None
        word = line.strip().lower()
        return "q" if word in QUIT else word if word in (HINT_KEY, "hint") else "\n"


class WatchedFile:
    """Tells when a file was saved since it was last graded."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.graded: tuple[int, int] | None = self.version()

    def version(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:  # an editor replacing the file: look again next poll
            return None
        return st.st_mtime_ns, st.st_size

    def saved(self) -> bool:
        return self.version() not in (None, self.graded)

    def mark_graded(self) -> None:
        self.graded = self.version()

    def settle(self) -> None:
        """Wait until the file exists and has not changed for SETTLE_S (MAX_SETTLE_S at most)."""
        give_up = time.monotonic() + MAX_SETTLE_S
        seen = self.version()
        while time.monotonic() < give_up:
            time.sleep(SETTLE_S)
            now = self.version()
            if now is not None and now == seen:
                return
            seen = now


def stops_grading(watched: WatchedFile, keys: Keys) -> Callable[[], bool]:
    """A cancel hook for runner.grade(): a new save stops the grading in progress (the loop
    then grades the new version), and so does q (the loop then stops). Enter is let go: a
    grading is already running; the hint key waits for the verdict."""

    def cancel() -> bool:
        if keys.pending is None and (key := keys.poll(0)) in ("q", HINT_KEY):
            keys.pending = key  # q stops this grading; a hint waits for it to end
        return keys.pending == "q" or watched.saved()

    return cancel


def clear_screen() -> None:
    if sys.stdout.isatty():
        sys.stdout.write("\033[2J\033[H")
        sys.stdout.flush()


def run(
    watched: WatchedFile,
    keys: Keys,
    grade: Callable[[], str | None],
    tick: Callable[[], str | None],
    hint: Callable[[], str | None] | None = None,
) -> str:
    """Grade on every save or Enter until grade() or tick() says why to stop, or q.

    tick() runs every poll (a countdown, a status line); hint(), where given, on the hint key;
    each returns None to go on.
    """
    while True:
        if (why := tick()) is not None:
            return why
        key = keys.poll(POLL_S)
        if key == "q":
            return "you stopped"
        if hint is not None and key is not None and key.strip() in (HINT_KEY, "hint"):
            watched.mark_graded()
            if (why := hint()) is not None:
                return why
            continue
        saved = watched.saved()
        if saved:
            watched.settle()
        if key == "\n" or saved:
            watched.mark_graded()
            if (why := grade()) is not None:
                return why
