"""Progress from the history: a table per kata with its next due date, the checks failed most
often (as the learner reads them), and which kata to practise next and why: the first of
`today`'s plan (practice.schedule), so that progress, today and the mock agree."""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from norm_katas.content import registry
from norm_katas.engine import suggest
from norm_katas.practice import history, schedule
from norm_katas.practice.wording import sentence

TESTS = "tests"  # the test-writing mode's gradings: scored as "tests", the mutants its stretch


def score_label(event: history.Event) -> str:
    return "tests" if event.mode == TESTS else "core"


@dataclass
class KataProgress:
    kata: registry.Kata
    gradings: list[history.Event]
    mocks: dict[str, list[history.Event]]  # mock_id -> its gradings
    peeks: int

    @property
    def attempts(self) -> int:
        """Practice and notebook gradings plus mock interviews (a mock counts once)."""
        return sum(e.mode != "mock" for e in self.gradings) + len(self.mocks)

    @property
    def layer_gradings(self) -> list[history.Event]:
        """The gradings of the learner's layer: not those of their tests (mode "tests")."""
        return [e for e in self.gradings if e.mode != TESTS]

    @property
    def solved(self) -> bool:
        return any(e.solved for e in self.layer_gradings)

    @property
    def best_mock_seconds(self) -> float | None:
        times = [e.seconds for e in self.gradings if e.mode == "mock" and e.solved and e.seconds]
        return min(times, default=None)

    @property
    def slow(self) -> bool:
        best = self.best_mock_seconds
        return best is not None and best > self.kata.minutes * 60

    @property
    def last(self) -> history.Event | None:
        return self.gradings[-1] if self.gradings else None

    @property
    def best_parity(self) -> tuple[int, int] | None:
        """The best torch-parity score of a grading that solved the core."""
        scores = [
            (e.parity_passed, e.parity_total)
            for e in self.layer_gradings
            if e.solved and e.parity_total is not None and e.parity_passed is not None
        ]
        return max(scores, default=None)

    def most_failed(self, n: int = 2) -> list[tuple[str, int]]:
        """The headlines seen most often: a mistake counts once, at its headline, not at every
        check that fails along with it. (Gradings recorded before headlines were say nothing.)"""
        counts = Counter(e.headline for e in self.gradings if e.headline)
        return counts.most_common(n)


def collect(events: list[history.Event] | None = None) -> list[KataProgress]:
    """Each kata's progress, in the registry's order, from the history (or `events`)."""
    events = history.events() if events is None else events
    result = []
    for kata in registry.load():
        mine = [e for e in events if e.kata == kata.name]
        # An untouched stub or a file that did not load is no attempt: it tries nothing.
        gradings = [e for e in mine if e.mode in history.GRADING_MODES and e.attempt]
        mocks: dict[str, list[history.Event]] = {}
        for e in gradings:
            if e.mode == "mock" and e.mock_id:
                mocks.setdefault(e.mock_id, []).append(e)
        result.append(KataProgress(kata, gradings, mocks, sum(e.mode == "peek" for e in mine)))
    return result


def clock(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = round(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


def due_cell(card: schedule.Card | None, at: datetime) -> str:
    """A kata's next due date in the table: '2026-03-10, today', '-' when never tried."""
    if card is None or card.due is None:
        return "-"
    when = schedule.due_words(card.due, at).removeprefix("due ")
    return f"{schedule.day(card.due, at).isoformat()}, {when}"


def table(progress: list[KataProgress], plan: schedule.Plan | None = None) -> str:
    """One row per kata; with the schedule's plan, each kata's next due date too."""
    header = ("kata", "attempts", "solved", "parity", "best mock / suggested", "last result")
    if plan is not None:
        header += ("next due",)
        cards = {e.kata.name: e.card for e in plan.entries}
    rows = [header]
    for p in progress:
        last = p.last
        last_text = (
            f"{score_label(last)} {last.passed}/{last.total} ({last.mode}, {last.at[:10]})"
            if last and last.total
            else "-"
        )
        parity = f"{p.best_parity[0]}/{p.best_parity[1]}" if p.best_parity else "-"
        best = f"{clock(p.best_mock_seconds)} / {p.kata.minutes}:00"
        peeks = f" ({p.peeks} peek{'s' * (p.peeks > 1)})" if p.peeks else ""
        solved = ("yes" if p.solved else "no") + peeks
        row = (p.kata.name, str(p.attempts), solved, parity, best, last_text)
        if plan is not None:
            row += (due_cell(cards.get(p.kata.name), plan.at),)
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def weak_spots(progress: list[KataProgress]) -> str:
    """The checks each kata fails most often, in the learner's words."""
    lines = []
    for p in progress:
        for name, n in p.most_failed():
            lines.append(f"  {p.kata.name}: {sentence(p.kata, name)} (failed {n}×)")
    return "\n".join(["What you fail most often:", *lines]) if lines else ""


def attempts(kata: str | None = None, limit: int | None = None) -> str:
    """Past attempts, oldest first (the last `limit`): when, which kata, how, the scores and
    the headline mistake in the learner's words."""
    known = {k.name: k for k in registry.load()}
    events = [e for e in history.events(kata) if e.mode in history.GRADING_MODES and e.attempt]
    shown = events[-limit:] if limit else events
    if not shown:
        return "No attempts yet" + (f" at {kata}." if kata else ".")
    lines = []
    for e in shown:
        label, stretch = score_label(e), "mutants" if e.mode == TESTS else "parity"
        core = f"{label} {e.passed}/{e.total}" if e.total else f"{label} -"
        parity = (
            f"{stretch} {e.parity_passed}/{e.parity_total}" if e.parity_total else f"{stretch} -"
        )
        mistake = sentence(known[e.kata], e.headline) if e.headline and e.kata in known else ""
        if e.solved:  # the core passed: a headline left is torch parity's, the stretch
            result = "✓ solved" + (f"; torch parity (stretch): {mistake}" if mistake else "")
        else:
            result = f"✗ {mistake}" if mistake else ""
        when = e.at[:16].replace("T", " ")
        lines.append(f"{when}  {e.kata:<20} {e.mode:<8} {core:<11} {parity:<12} {result}".rstrip())
    left = len(events) - len(shown)
    more = [f"({left} earlier; --limit 0 lists them all)"] if left else []
    return "\n".join([*more, *lines])


def report(where: str = suggest.TERMINAL, at: datetime | None = None) -> str:
    """Progress as `where` (a door) shows it: the commands it suggests are typed there. `at`:
    the moment the schedule is made for (now)."""
    events = history.events()
    progress = collect(events)
    try:
        plan: schedule.Plan | None = schedule.plan(at, events)
    except schedule.Unavailable as e:
        plan, missing = None, str(e)
    place = history.db_path()
    spots = weak_spots(progress)
    if plan is not None and (first := plan.first) is not None:
        pick = first.kata
        due = len(plan.of("due"))
        today = suggest.command("today", where=where)
        nexts = (
            f"\nNext: {pick.name} ({pick.title}): {first.why}.\n"
            f"      {suggest.command('grade', pick.name, where=where)}   or   "
            f"{suggest.command('mock', '--kata', pick.name, where=where)}\n"
            + _no_workspace(where)
            + f"      Due today: {due} kata{'s' * (due != 1)}; {today} plans a session.\n"
        )
    else:
        nexts = f"\n{missing}\n" if plan is None else ""
    return (
        f"{table(progress, plan)}\n"
        + (f"\n{spots}\n" if spots else "")
        + nexts
        + f"\nHistory: {place}  "
        f"({suggest.command('progress', '--history', where=where)} lists each attempt)"
    )


def _no_workspace(where: str) -> str:
    """Where the commands above are typed, when not here: an installed copy grades the kata
    files of a workspace, and there is none here."""
    if where != suggest.TERMINAL:
        return ""
    try:
        registry.workspace()
    except registry.NoWorkspace:
        return (
            "      (inside your workspace, and there is none here: norm-katas init [DIR] makes "
            "one)\n"
        )
    return ""


def parser(
    prog: str, kind: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> argparse.ArgumentParser:
    """The options of progress: `nox -s progress --`, `norm-katas progress`, %kata_progress
    (whose parser, `kind`, shows what argparse says in the cell)."""
    parser = kind(prog=prog, description="Your progress.")
    parser.add_argument("--history", action="store_true", help="list your past attempts")
    parser.add_argument("kata", nargs="?", help="with --history: only this kata's attempts")
    parser.add_argument(
        "--limit", type=int, default=30, help="with --history: the last N (default 30, 0: all)"
    )
    return parser


def answer(parser: argparse.ArgumentParser, argv: list[str], where: str) -> str | None:
    """What progress shows for these options, or None for the table and its advice (what
    `where`, a door, shows its own way). Unknown kata: KeyError; wrong options: parser.error."""
    args = parser.parse_args(argv)
    if args.kata and not args.history:
        parser.error(
            "a kata name goes with --history "
            f"({suggest.command('progress', '--history', 'layernorm', where=where)})"
        )
    if not args.history:
        return None
    kata = registry.get(args.kata).name if args.kata else None
    return attempts(kata, args.limit or None)
