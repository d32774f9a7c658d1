"""A timed mock interview: a fresh stub with the task and the contract only, a countdown,
regrading on save, a scorecard, then the pitfalls and the follow-up questions an interviewer
would ask. It is solved when the interview core passes; torch parity is an optional stretch."""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from norm_katas.content import followups, registry
from norm_katas.engine import runner, suggest
from norm_katas.engine.report import CORE, PARITY, Report
from norm_katas.engine.request import Request
from norm_katas.practice import grading, history, loop, schedule, workspace
from norm_katas.practice.progress import clock

MAX_MINUTES = 600  # ten hours: longer than any interview; also keeps out inf and typos


def budget_minutes(text: str) -> float:
    """--minutes: a time budget a mock can run on (argparse says which option and exits 2)."""
    try:
        minutes = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of minutes") from None
    if not 0 < minutes <= MAX_MINUTES:  # also false for nan
        raise argparse.ArgumentTypeError(
            f"{text} minutes: give a budget more than 0 and at most {MAX_MINUTES} minutes"
        )
    return minutes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The mock's options, the same through every door: --kata, --minutes, --seed."""
    parser.add_argument(
        "--kata",
        help="which kata (default: the first of today's plan: the most overdue kata, else the "
        "easiest never tried, else the weakest)",
    )
    parser.add_argument(
        "--minutes",
        type=budget_minutes,
        help=f"time budget, more than 0 and at most {MAX_MINUTES} (default: the kata's suggestion)",
    )
    # The kata was once drawn at random; the schedule picks it now. Kept so that a command or a
    # notebook cell written for the random draw still runs.
    parser.add_argument(
        "--seed", type=int, help="no effect: the schedule picks the kata (kept for old commands)"
    )


def pick(
    kata_name: str | None, minutes: float | None, seed: int | None
) -> tuple[registry.Kata, float]:
    """The kata (named, else the first of today's plan: schedule.plan) and its budget in
    seconds (--minutes, else the kata's suggestion). KeyError: no kata of that name;
    schedule.Unavailable: none named, and no fsrs to plan with. `seed`: no effect."""
    if kata_name:
        kata = registry.get(kata_name)
    else:
        first = schedule.plan().first
        assert first is not None, "the registry holds katas"
        kata = first.kata
    return kata, (kata.minutes if minutes is None else minutes) * 60


def follow_ups(kata: registry.Kata) -> list[tuple[str, str]]:
    """(question, model answer) of each follow-up question of the kata (content.followups)."""
    return followups.questions(kata)


@dataclass
class Mock:
    kata: registry.Kata
    path: Path
    budget: float
    started: float = field(default_factory=time.monotonic)
    mock_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    gradings: int = 0
    last: Report | None = None  # the last grading's report
    solved_at: float | None = None  # the interview core passed
    parity_at: float | None = None  # torch parity passed too
    stretch: bool = False  # going on for parity after the core was solved
    cancel: Callable[[], bool] | None = None  # stops a grading in progress: a new save, q

    def __post_init__(self) -> None:
        self.watched = loop.WatchedFile(self.path)  # the stub itself is graded only once saved
        self.request = Request.create(self.kata, str(self.path), mock=True)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def grade(self, clear: bool = True) -> str | None:
        """Grade the file; returns why the mock ends, or None to go on."""
        if clear:
            loop.clear_screen()
        elapsed = self.elapsed
        cancel = self.cancel if clear else None  # the final grading runs to its verdict
        outcome = grading.grade(self.request, mode="mock", cancel=cancel, **self.record(elapsed))
        if outcome.cancelled:  # saved again (graded next) or q (the mock ends): not a grading
            return None
        print(f"\nMock interview: {self.kata.title} · your file: {self.path}")
        return self.count(outcome, elapsed)

    def record(self, elapsed: float) -> dict[str, object]:
        """What the history records of a grading `elapsed` seconds into this mock, with mode
        "mock" (grading.grade's keyword arguments)."""
        return {"seconds": elapsed, "budget": self.budget, "mock_id": self.mock_id}

    def count(self, outcome: runner.Graded, elapsed: float) -> str | None:
        """Count a grading that ran, started `elapsed` seconds in; returns why the mock ends
        (solved, or every check passes when going on for parity), or None to go on."""
        self.gradings += 1
        report = outcome.report
        if report is None or outcome.code == runner.GRADER_FAILED:
            return None
        self.last = report
        if report.solved and self.solved_at is None:
            self.solved_at = elapsed
        if report.strict_solved and self.parity_at is None:
            self.parity_at = elapsed
        if self.parity_at is not None:
            return "every check passes"
        if self.solved_at is not None and not self.stretch:
            return "the interview core passes"
        return None

    def in_history(self) -> bool:
        """Whether an attempt of this mock's is recorded: an untouched stub's grading is none,
        so a mock stopped before the stub was changed leaves nothing for --history."""
        return any(e.mock_id == self.mock_id and e.attempt for e in history.events(self.kata.name))

    def status(self) -> str:
        left = max(0.0, self.budget - self.elapsed)
        last = self.last
        score = "core {}/{}".format(*last.tally(CORE)) if last else "not graded yet"
        if last and self.stretch:
            score += ", parity {}/{}".format(*last.tally(PARITY))
        gradings = f"{self.gradings} grading{'s' * (self.gradings != 1)}"
        return f"⏱  {clock(left)} left  ·  {gradings}  ·  {score}  ·  Enter: grade now, q: stop "


def watch(mock: Mock, keys: loop.Keys) -> str:
    """Run the clock until solved, time up or stopped; returns how it ended."""
    tty = sys.stdout.isatty()
    last_status = [0.0]

    def tick() -> str | None:
        if mock.elapsed >= mock.budget:
            return "time is up"
        now = time.monotonic()
        if tty or now - last_status[0] >= 60:
            print(("\r" if tty else "") + mock.status(), end="" if tty else "\n", flush=True)
            last_status[0] = now
        return None

    return loop.run(mock.watched, keys, mock.grade, tick)


def offer_parity(mock: Mock, keys: loop.Keys) -> bool:
    """After the core is solved: go on for torch parity? Enter or y goes on."""
    passed, total = mock.last.tally(PARITY) if mock.last else (0, 0)
    print(
        f"\n\nInterview core solved in {clock(mock.solved_at)}. Torch parity is at "
        f"{passed}/{total}: go on for it (stretch)? [y/N] ",
        end="",
        flush=True,
    )
    while True:
        key = keys.poll(0.5)
        if key is None and keys.open:
            continue
        print()
        return key is not None and key.strip().lower() in ("y", "yes")


def scorecard_rows(mock: Mock, ended: str) -> list[tuple[str, str]]:
    """The scorecard's lines, (label, value): result, time used of the budget, parity when it
    passed, gradings, how it ended. The terminal and the notebook lay them out."""
    core = mock.last.tally(CORE) if mock.last else (0, 0)
    parity = mock.last.tally(PARITY) if mock.last else (0, 0)
    score = f"core {core[0]}/{core[1]} · parity {parity[0]}/{parity[1]}"
    used = mock.solved_at if mock.solved_at is not None else min(mock.elapsed, mock.budget)
    share = f"{100 * used / mock.budget:.0f}% of the budget" if mock.budget else ""
    if mock.solved_at is not None:
        result = f"solved ✓ ({score})"
    else:
        result = f"not solved ({score})" if core[1] else "not graded"
    rows = [("Result", result), ("Time", f"{clock(used)} of {clock(mock.budget)} ({share})")]
    if mock.parity_at is not None and mock.solved_at is not None:
        rows.append(("Parity", f"every check passed at {clock(mock.parity_at)}"))
    return [*rows, ("Gradings", str(mock.gradings)), ("Ended", ended)]


def scorecard(mock: Mock, ended: str) -> str:
    rule = "─" * 64
    rows = [*scorecard_rows(mock, ended), ("Your file", str(mock.path))]
    lines = ["", rule, f"Scorecard: {mock.kata.title}", rule]
    lines += [f"  {label:10} {value}" for label, value in rows]
    return "\n".join([*lines, rule])


def pitfalls(kata: registry.Kata) -> str:
    """The stub's pitfalls section, which the mock's copy hides until the mock is over."""
    return workspace.split_pitfalls(workspace.pristine_stub(kata))[1]


def debrief(kata: registry.Kata, keys: loop.Keys) -> bool:
    """The pitfalls the stub hid during the mock, then the follow-up questions: on a terminal
    Enter and q act at once, as they did during the mock; piped input is read by line.
    False when q left the questions."""
    if hidden := pitfalls(kata):
        print(f"\nPitfalls interviewers probe on this layer:\n{hidden}")
    questions = follow_ups(kata)
    if not questions:
        return True
    print("\nFollow-up questions an interviewer would ask. Answer aloud, then press Enter.")
    for i, (question, answer) in enumerate(questions, 1):
        print(f"\nQ{i}. {question}")
        print("    (Enter shows a model answer, q leaves) ", end="", flush=True)
        key = keys.poll(0.5)
        while key is None and keys.open:
            key = keys.poll(0.5)
        print()
        if key == "q":
            return False
        print(f"A{i}. {answer}")  # Enter, or the end of piped input
    return True


# The "how would you test it?" round after a mock: its own clock.
TESTS_MINUTES = 10.0


def offer_tests(kata: registry.Kata, keys: loop.Keys) -> bool:
    """After the scorecard: the interviewer's "how would you test it?", as the test-writing
    mode on a clock of its own? Enter or n skips it, y starts it."""
    if not kata.tests_pristine.exists():
        return False
    print(
        f"\nHow would you test it? Write tests that catch the mistakes candidates make, "
        f"{clock(TESTS_MINUTES * 60)} on a new clock (y/N) ",
        end="",
        flush=True,
    )
    while True:
        key = keys.poll(0.5)
        if key is None and keys.open:
            continue
        print()
        return key is not None and key.strip().lower() in ("y", "yes")


def tests_round(kata: registry.Kata, keys: loop.Keys) -> None:
    """The follow-up round: a fresh test stub, graded on every save by the test-writing mode,
    until its tests catch every interview mistake with no false alarm, time is up, or q."""
    path = workspace.scratch_tests_copy(kata)
    budget = TESTS_MINUTES * 60
    watched = loop.WatchedFile(path)  # before the path is shown: a save right after it counts
    print(f"\nYour tests go in\n\n    {path}\n")
    print("Each test takes the layer as `kata`; saving grades them against correct and wrong")
    print("layers; Enter grades now; q stops. The clock starts now.")
    request = Request.create(kata, str(path), tests=True, mock=True)
    cancel = loop.stops_grading(watched, keys)
    started = time.monotonic()
    last: list[Any] = [None]

    def grade() -> str | None:
        loop.clear_screen()
        outcome = grading.grade(request, mode="mock", cancel=cancel)
        if outcome.proof is not None:
            last[0] = outcome.proof
            if outcome.proof.solved:
                return "your tests catch every interview mistake"
        return None

    def tick() -> str | None:
        return "time is up" if time.monotonic() - started >= budget else None

    ended = loop.run(watched, keys, grade, tick)
    used = min(time.monotonic() - started, budget)
    verdict = last[0]
    score = (
        f"{verdict.caught} of {len(verdict.mistakes)} interview mistakes caught, "
        f"{len({a.test for a in verdict.alarms})} false alarms"
        if verdict is not None
        else "not graded"
    )
    print(f"\nTests round: {score}; {clock(used)} of {clock(budget)} ({ended}).")


def run(kata_name: str | None, minutes: float | None, seed: int | None) -> int:
    kata, budget = pick(kata_name, minutes, seed)
    try:
        # Before the clock starts; a mock grades on the CPU (Request.create's default device).
        runner.warm_up([kata], long_lived=True, device="cpu")
    except runner.GraderError as e:
        print(e, file=sys.stderr)
        return runner.GRADER_FAILED
    except KeyboardInterrupt:
        print("\nStopped (Ctrl-C) before the mock began: no clock ran, nothing was recorded.")
        return 130
    path = workspace.scratch_copy(kata)
    mock = Mock(kata, path, budget)  # watched before the path is shown: a save right after counts
    print(f"Mock interview: {kata.title} ({kata.difficulty}), {clock(budget)} on the clock.")
    print(f"\nYour task: implement the classes in\n\n    {path}\n")
    print("Its docstring states the task and the contract. Saving the file grades it; Enter")
    print("grades now; q (or Ctrl-C) stops. Solved when the interview core passes.")
    print("The clock starts now.\n")
    mock.started = time.monotonic()
    keys = loop.Keys()
    mock.cancel = loop.stops_grading(mock.watched, keys)
    try:
        with keys.cbreak():
            ended = watch(mock, keys)
            in_time = mock.budget > mock.elapsed
            if ended == "the interview core passes" and in_time and offer_parity(mock, keys):
                mock.stretch = True
                ended = watch(mock, keys)
            if mock.solved_at is None and (mock.gradings == 0 or mock.watched.saved()):
                print("\n\nFinal grading of your file:")
                mock.watched.mark_graded()
                mock.grade(clear=False)
    except KeyboardInterrupt:
        ended = "you stopped"
    print(scorecard(mock, ended))
    try:
        with keys.cbreak():
            # "How would you test it?" is the last follow-up: not after q left the others.
            if debrief(kata, keys) and offer_tests(kata, keys):
                tests_round(kata, keys)
    except KeyboardInterrupt:
        print()
    if mock.in_history():
        print(f"\nThis mock is in your history: {suggest.command('progress')}")
    else:
        print("\nThis mock left nothing in your history: no attempt of yours was recorded.")
    return 0  # a mock that ends with its scorecard went as it should, solved or not
