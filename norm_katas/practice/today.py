"""`today`: what to practise today, from the schedule (practice.schedule): the katas due, most
overdue first, then those never tried, easiest first, then the rest, weakest first, each with
why; `--minutes N` fits a session of that length from the katas' suggested minutes."""

from __future__ import annotations

import argparse
import textwrap
from datetime import datetime

from norm_katas.engine import suggest
from norm_katas.practice import schedule

SHOWN = 3  # without --all: the katas never tried and those not due yet, the first few of each
MAX_MINUTES = 24 * 60
WIDTH = 96  # prose is wrapped to this


def session_minutes(text: str) -> float:
    """--minutes: a session's length (argparse says which option and exits 2)."""
    try:
        minutes = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of minutes") from None
    if not 0 < minutes <= MAX_MINUTES:  # also false for nan
        raise argparse.ArgumentTypeError(
            f"{text} minutes: give a session more than 0 and at most {MAX_MINUTES} minutes"
        )
    return minutes


def parser(
    prog: str, kind: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> argparse.ArgumentParser:
    """The options of today: `nox -s today --`, `norm-katas today`, %kata_today (whose parser,
    `kind`, shows what argparse says in the cell)."""
    parser = kind(prog=prog, description="What to practise today, from your history.")
    parser.add_argument(
        "--minutes",
        type=session_minutes,
        help="fit a session of this many minutes, from the katas' suggested minutes",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="every kata not due yet and never tried, not the first few",
    )
    return parser


def _line(entry: schedule.Entry, width: int) -> str:
    kata = entry.kata
    return f"  {kata.name:<{width}} {kata.minutes:>3} min  {entry.why}"


def _section(title: str, entries: list[schedule.Entry], width: int, limit: int | None) -> list[str]:
    if not entries:
        return []
    shown = entries if limit is None else entries[:limit]
    lines = [title, *(_line(e, width) for e in shown)]
    if left := len(entries) - len(shown):
        lines.append(f"  ... and {left} more (--all lists them)")
    return lines


def _start(entry: schedule.Entry, plan: schedule.Plan, where: str) -> str:
    """How to start on `entry`: grade it, or run it as a mock (which, without --kata, picks
    the plan's first kata: said so only where that is this one)."""
    name = entry.kata.name
    grade = suggest.command("grade", name, where=where)
    if entry is plan.first:
        timed = f"{suggest.command('mock', where=where)}   (timed: the mock picks {name} too)"
    else:
        timed = f"{suggest.command('mock', '--kata', name, where=where)}   (timed)"
    return f"Start with {name}:\n    {grade}\n    {timed}"


def _empty(plan: schedule.Plan, where: str) -> str:
    first = plan.first
    assert first is not None
    kata = first.kata
    start = textwrap.fill(
        f"Your history is empty: nothing is scheduled yet. Start with {kata.name} "
        f"({kata.title}, {kata.difficulty}), about {kata.minutes} minutes:",
        WIDTH,
    )
    then = textwrap.fill(
        "Each grading is recorded, and from your history this says which katas are due: one "
        "you solved comes back after a few days, one you did not solve the next day.",
        WIDTH,
    )
    return f"{start}\n    {suggest.command('grade', kata.name, where=where)}\n{then}"


def text(minutes: float | None = None, show_all: bool = False, where: str = suggest.TERMINAL,
         at: datetime | None = None) -> str:  # fmt: skip
    """What `today` prints. schedule.Unavailable: no fsrs here."""
    plan = schedule.plan(at)
    width = max((len(e.kata.name) for e in plan.entries), default=10)
    date = plan.at.strftime("%a %d %b %Y")
    due, new, ahead = plan.of("due"), plan.of("new"), plan.of("ahead")
    started = bool(due or ahead)
    if minutes is not None:
        chosen = schedule.fit(plan.entries, minutes)
        length = f"{minutes:g}-minute session"
        if not chosen:
            quickest = min(plan.entries, key=lambda e: e.kata.minutes)
            return (
                f"No kata fits a {length}: the quickest, {quickest.kata.name}, is suggested at "
                f"{quickest.kata.minutes} minutes."
            )
        total = sum(e.kata.minutes for e in chosen)
        head = f"A {length}, {date}: {len(chosen)} kata{'s' * (len(chosen) != 1)}, {total} min."
        lines = [head, *(_line(e, width) for e in chosen)]
        if left := [e for e in plan.entries if e not in chosen and e.kind != "ahead"]:
            more = f" and {len(left) - 1} more due or new" if len(left) > 1 else ""
            lines.append(
                f"Left for another day: {left[0].kata.name} ({left[0].kata.minutes} min){more}."
            )
        body = "\n".join(lines)
        return (
            f"{_empty(plan, where)}\n\n" if not started else ""
        ) + f"{body}\n\n{_start(chosen[0], plan, where)}"
    if not started:
        return _empty(plan, where)
    limit = None if show_all else SHOWN
    counts = (f"{len(due)} due" if due else "nothing due") + (
        f", {len(new)} never tried" if new else ""
    )
    lines = [f"Today, {date}: {counts}.", ""]
    lines += _section("Due, most overdue first:", due, width, None)
    lines += _section("Never tried, easiest first:", new, width, limit)
    lines += _section("Not due yet, weakest (soonest due) first:", ahead, width, limit)
    assert plan.first is not None  # started: a kata is scheduled
    return "\n".join([*lines, "", _start(plan.first, plan, where)])


def answer(parser: argparse.ArgumentParser, argv: list[str], where: str) -> str:
    """What today shows for these options (wrong options: parser.error; no fsrs: the message
    of schedule.Unavailable, which says how to install it)."""
    args = parser.parse_args(argv)
    return text(args.minutes, args.all, where)
