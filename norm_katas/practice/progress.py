"""Progress from the history: a table per kata, the checks failed most often (as the learner
reads them), and which kata to practise next and why."""

from __future__ import annotations

import argparse
import ast
import functools
import random
from collections import Counter
from dataclasses import dataclass

from norm_katas.content import registry
from norm_katas.engine import suggest
from norm_katas.practice import history


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
    def solved(self) -> bool:
        return any(e.solved for e in self.gradings)

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
            for e in self.gradings
            if e.solved and e.parity_total is not None and e.parity_passed is not None
        ]
        return max(scores, default=None)

    def most_failed(self, n: int = 2) -> list[tuple[str, int]]:
        """The headlines seen most often: a mistake counts once, at its headline, not at every
        check that fails along with it. (Gradings recorded before headlines were say nothing.)"""
        counts = Counter(e.headline for e in self.gradings if e.headline)
        return counts.most_common(n)


@functools.cache
def sentences(kata: registry.Kata) -> dict[str, str]:
    """Check name -> the one-line description the learner reads, from the suite's docstrings."""
    try:
        tree = ast.parse(kata.suite.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return {}
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            doc = ast.get_docstring(node) or ""
            found[node.name] = " ".join(doc.split("\n\n")[0].split()) or node.name
    return found


def sentence(kata: registry.Kata, check: str) -> str:
    """'the variance is the biased one ... [float16]' for 'test_biased_variance[float16]'."""
    name, _, param = check.partition("[")
    text = sentences(kata).get(name, name.removeprefix("test_").replace("_", " "))
    return f"{text} [{param}" if param else text


def collect() -> list[KataProgress]:
    events = history.events()
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


def recommend(progress: list[KataProgress]) -> tuple[KataProgress, str]:
    """The kata to practise next, with the reason, in order of urgency."""
    for p in progress:  # finish what you started before starting something new
        if p.gradings and not p.solved:
            last = p.last
            score = f", last core {last.passed}/{last.total}" if last and last.total else ""
            attempts = f"{p.attempts} attempt{'s' * (p.attempts != 1)}"
            return p, f"started but not solved yet ({attempts}{score})"
    for p in progress:
        if not p.gradings:
            return p, "you have not tried it yet"
    unmocked = [p for p in progress if not p.mocks or p.best_mock_seconds is None]
    if unmocked:
        return unmocked[0], "solved in practice, never under the clock: run it as a mock"
    slow = [p for p in progress if p.slow]
    if slow:
        worst = max(slow, key=lambda p: (p.best_mock_seconds or 0) / (p.kata.minutes * 60))
        return worst, "your best mock is slower than the suggested time"
    stalest = min(progress, key=lambda p: p.last.at if p.last else "")
    return stalest, "all solved in time; this is the one you practised longest ago"


def pick_for_mock(progress: list[KataProgress], rng: random.Random) -> registry.Kata:
    """A random kata, weighted toward never solved (4), slow or never mocked (2), else 1."""
    weights = [
        4 if not p.solved else 2 if p.slow or p.best_mock_seconds is None else 1 for p in progress
    ]
    return rng.choices([p.kata for p in progress], weights=weights)[0]


def clock(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = round(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


def table(progress: list[KataProgress]) -> str:
    header = ("kata", "attempts", "solved", "parity", "best mock / suggested", "last result")
    rows = [header]
    for p in progress:
        last = p.last
        last_text = (
            f"core {last.passed}/{last.total} ({last.mode}, {last.at[:10]})"
            if last and last.total
            else "-"
        )
        parity = f"{p.best_parity[0]}/{p.best_parity[1]}" if p.best_parity else "-"
        best = f"{clock(p.best_mock_seconds)} / {p.kata.minutes}:00"
        peeks = f" ({p.peeks} peek{'s' * (p.peeks > 1)})" if p.peeks else ""
        solved = ("yes" if p.solved else "no") + peeks
        rows.append((p.kata.name, str(p.attempts), solved, parity, best, last_text))
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
        core = f"core {e.passed}/{e.total}" if e.total else "core -"
        parity = f"parity {e.parity_passed}/{e.parity_total}" if e.parity_total else "parity -"
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


def report(where: str = suggest.TERMINAL) -> str:
    """Progress as `where` (a door) shows it: the commands it suggests are typed there."""
    progress = collect()
    pick, why = recommend(progress)
    place = history.db_path()
    spots = weak_spots(progress)
    return (
        f"{table(progress)}\n"
        + (f"\n{spots}\n" if spots else "")
        + f"\nNext: {pick.kata.name} ({pick.kata.title}): {why}.\n"
        f"      {suggest.command('grade', pick.kata.name, where=where)}   or   "
        f"{suggest.command('mock', '--kata', pick.kata.name, where=where)}\n"
        + _no_workspace(where)
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
