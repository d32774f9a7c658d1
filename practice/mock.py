"""A timed mock interview: a fresh stub, a countdown, regrading on save, a scorecard and the
follow-up questions an interviewer would ask."""

from __future__ import annotations

import ast
import os
import random
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from grader import progress, registry, runner, workspace
from grader.progress import clock

POLL_S = 0.5
SETTLE_S = 0.3  # editors write a file in steps: wait for it to settle before grading


def follow_ups(kata: registry.Kata) -> list[tuple[str, str]]:
    """The suite's FOLLOW_UPS = [(question, answer), ...], read without importing it."""
    tree = ast.parse(kata.suite.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "FOLLOW_UPS" for t in node.targets
        ):
            return [tuple(pair) for pair in ast.literal_eval(node.value)]
    return []


@dataclass
class Mock:
    kata: registry.Kata
    path: Path
    budget: float
    started: float = field(default_factory=time.monotonic)
    mock_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    gradings: int = 0
    last: dict | None = None
    solved_at: float | None = None
    graded_version: tuple[int, int] | None = None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def version(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:  # an editor replacing the file: look again next poll
            return None
        return st.st_mtime_ns, st.st_size

    def grade(self) -> None:
        print("\n")
        self.graded_version = self.version()
        elapsed = self.elapsed
        _, report = runner.grade(
            self.kata, ["--impl", str(self.path)], mode="mock",
            seconds=elapsed, budget=self.budget, mock_id=self.mock_id,
        )  # fmt: skip
        self.gradings += 1
        if report is not None:
            self.last = report
            if report.get("total") and report["passed"] == report["total"]:
                self.solved_at = elapsed


class Input:
    """Lines typed while the clock runs, without blocking the countdown."""

    def __init__(self) -> None:
        self.open = sys.stdin is not None and not sys.stdin.closed

    def poll(self, timeout: float) -> str | None:
        if not self.open:
            time.sleep(timeout)
            return None
        if os.name == "nt":  # pragma: no cover - Windows consoles cannot select() on stdin
            import msvcrt

            end = time.monotonic() + timeout
            while time.monotonic() < end:
                if msvcrt.kbhit():
                    return sys.stdin.readline()
                time.sleep(0.05)
            return None
        import select

        ready, _, _ = select.select([sys.stdin], [], [], timeout)
        if not ready:
            return None
        line = sys.stdin.readline()
        if line == "":  # end of input: keep the clock and the file watch going
            self.open = False
            return None
        return line


def status(mock: Mock) -> str:
    left = max(0.0, mock.budget - mock.elapsed)
    last = f"last {mock.last['passed']}/{mock.last['total']}" if mock.last else "not graded yet"
    keys = "Enter: grade now, q: stop"
    gradings = f"{mock.gradings} grading{'s' * (mock.gradings != 1)}"
    return f"⏱  {clock(left)} left  ·  {gradings}  ·  {last}  ·  {keys} "


def watch(mock: Mock) -> str:
    """Run the clock until solved, time up or stopped; returns how it ended."""
    keys = Input()
    tty = sys.stdout.isatty()
    last_status = 0.0
    while True:
        if mock.elapsed >= mock.budget:
            return "time is up"
        now = time.monotonic()
        if tty or now - last_status >= 60:
            print(("\r" if tty else "") + status(mock), end="" if tty else "\n", flush=True)
            last_status = now
        line = keys.poll(POLL_S)
        if line is not None and line.strip().lower() in ("q", "quit", "exit"):
            return "you stopped"
        changed = mock.version() not in (None, mock.graded_version)
        if changed:
            time.sleep(SETTLE_S)
        if line is not None or changed:
            mock.grade()
            if mock.solved_at is not None:
                return "all checks pass"


def scorecard(mock: Mock, ended: str) -> str:
    last = mock.last or {}
    passed, total = last.get("passed", 0), last.get("total", 0)
    used = mock.solved_at if mock.solved_at is not None else min(mock.elapsed, mock.budget)
    share = f"{100 * used / mock.budget:.0f}% of the budget" if mock.budget else ""
    result = (
        f"solved ✓ ({passed}/{total} checks)"
        if mock.solved_at is not None
        else (f"not solved ({passed}/{total} checks)" if total else "not graded")
    )
    rule = "─" * 64
    return "\n".join([
        "", rule, f"Scorecard: {mock.kata.title}", rule,
        f"  Result     {result}",
        f"  Time       {clock(used)} of {clock(mock.budget)} ({share})",
        f"  Gradings   {mock.gradings}",
        f"  Ended      {ended}",
        f"  Your file  {mock.path}",
        rule,
    ])  # fmt: skip


def ask_follow_ups(kata: registry.Kata) -> None:
    questions = follow_ups(kata)
    if not questions:
        return
    print("\nFollow-up questions an interviewer would ask. Answer aloud, then press Enter.")
    for i, (question, answer) in enumerate(questions, 1):
        print(f"\nQ{i}. {question}")
        try:
            input("    (Enter shows a model answer) ")
        except EOFError:
            print()
        print(f"A{i}. {answer}")


def run(kata_name: str | None, minutes: float | None, seed: int | None) -> int:
    rng = random.Random(seed)
    pick = progress.pick_for_mock
    kata = registry.get(kata_name) if kata_name else pick(progress.collect(), rng)
    budget = (kata.minutes if minutes is None else minutes) * 60
    path = workspace.scratch_copy(kata)
    print(f"Mock interview: {kata.title} ({kata.difficulty}), {clock(budget)} on the clock.")
    print(f"\nYour task: implement the classes in\n\n    {path}\n")
    print("Its docstring states the contract. Saving the file grades it; Enter grades now;")
    print("q then Enter (or Ctrl-C) stops. The clock starts now.\n")
    mock = Mock(kata, path, budget)
    mock.graded_version = mock.version()  # the stub itself is not graded until you save
    try:
        ended = watch(mock)
        if mock.solved_at is None and (mock.gradings == 0 or mock.version() != mock.graded_version):
            print("\n\nFinal grading of your file:")
            mock.grade()
    except KeyboardInterrupt:
        ended = "you stopped"
    print(scorecard(mock, ended))
    try:
        ask_follow_ups(kata)
    except KeyboardInterrupt:
        print()
    print("\nThis mock is in your history: nox -s progress")
    return 0  # a mock that ends with its scorecard went as it should, solved or not
