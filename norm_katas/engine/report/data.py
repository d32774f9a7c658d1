"""A grading's report as data: each check's outcome, the verdict they add up to, and its JSON.

Checks come in two tiers: the interview core (what an interviewer checks at the whiteboard) and
torch parity (what torch.nn does beyond that). The verdict opens with one headline, the most
specific failure, then folds into one line the failures that share its cause, where there is
evidence of it (Report.fold), and names each of the others.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from norm_katas.content import pristine, registry
from norm_katas.engine.request import NOT_SOLVED, SOLVED


class _Word(str, Enum):
    """A word of the JSON report: equal to its string, and written as it."""

    def __str__(self) -> str:
        return self.value


class Outcome(_Word):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    NOT_RUN = "not run"


class Kind(_Word):
    """What kind of failure: the learner's code is unfinished, wrong, raised, or ran too long."""

    NONE = ""  # not a failure
    TODO = "todo"
    FAIL = "fail"
    CRASH = "crash"
    TIMEOUT = "timeout"


class Tier(_Word):
    CORE = "core"  # the interview core: decides "solved"
    PARITY = "parity"  # torch parity: a stretch goal, required by --strict
    INFO = "info"  # a report for the learner: never graded or counted


TODO, FAIL, CRASH, TIMEOUT = Kind.TODO, Kind.FAIL, Kind.CRASH, Kind.TIMEOUT
CORE, PARITY, INFO = Tier.CORE, Tier.PARITY, Tier.INFO
TIER_TITLES = {CORE: "Interview core", PARITY: "Torch parity (stretch)", INFO: "Information"}
OTHER_TITLES = 5  # failures named under the headline; --all shows the rest


@dataclass
class Check:
    name: str  # the test function, e.g. test_eps_inside_sqrt (with [id] when parametrized)
    description: str  # first docstring line, e.g. "eps is added inside the square root"
    # The docstring's later paragraphs, idea first; once failed, those that fit the failure
    # (choose_hints)
    hints: list[str]
    tier: Tier = CORE
    broad: bool = False  # a catch-all check many mistakes fail: never the headline if another is
    outcome: Outcome = Outcome.NOT_RUN
    kind: Kind = Kind.NONE  # for failures
    message: str = ""
    seconds: float = 0.0  # setup, call and teardown: where a grading spends its time
    belongs: str = ""  # for a failure of another check's property: that check's function
    output: str = ""  # what the learner's code printed during the check (stdout, then stderr)
    # For an exception out of the learner's code: its type and line there, as "RuntimeError at
    # katas/layernorm.py line 50". Two checks that raise the same one share a cause.
    raised: str = ""

    @property
    def function(self) -> str:
        return self.name.split("[")[0]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Check:
        """A check as Report.to_json wrote it (its hints: those the learner asked for)."""
        return cls(
            data["name"], data.get("description", ""), list(data.get("hints", [])),
            tier=Tier(data.get("tier", CORE)), broad=data.get("broad", False),
            outcome=Outcome(data.get("outcome", Outcome.NOT_RUN)),
            kind=Kind(data.get("kind", Kind.NONE)), message=data.get("message", ""),
            seconds=data.get("seconds", 0.0), belongs=data.get("belongs", ""),
            output=data.get("output", ""), raised=data.get("raised", ""),
        )  # fmt: skip


def same_cause(head: Check, other: Check) -> str | None:
    """The evidence that `other` fails for the headline's reason, in words, or None when
    there is none: failing together is no evidence (a wrong variance and a mask on the CPU
    fail many of the same checks)."""
    if other.function == head.function:
        return "the same check on other inputs"  # a parametrized check's variants
    if head.function == other.belongs or (head.belongs and head.belongs == other.belongs):
        return "the same mistake, met by other checks"  # declared by the suite (fail_for)
    if other.kind == head.kind and other.raised and other.raised == head.raised:
        return f"the same {head.raised}"
    if other.kind == head.kind and other.message and other.message == head.message:
        return "the same message"
    return None


@dataclass
class Fold:
    """How the verdict groups the failures under its headline: decided here once, so that
    every renderer (terminal, notebook) says the same."""

    head: Check
    same: list[Check]  # failures with evidence that they share the headline's cause
    reasons: list[str]  # that evidence, in words, each once
    other: list[Check]  # the rest of the headline's tier: each its own problem, as far as known
    later: list[Check]  # under a core headline, torch parity's other failures

    def same_text(self) -> str:
        """'N more checks fail for the same reason: <evidence>', or "" when none does."""
        if not self.same:
            return ""
        n = len(self.same)
        checks = "1 more check fails" if n == 1 else f"{n} more checks fail"
        return f"{checks} for the same reason: {'; '.join(self.reasons)}"

    def other_text(self) -> str:
        """'N other checks fail', the titles to follow, or "" when none does."""
        n = len(self.other)
        return "" if not n else "1 other check fails" if n == 1 else f"{n} other checks fail"

    def other_titles(self) -> tuple[list[str], int]:
        """The other failures' titles, each with how it failed when not by a wrong value, and
        how many more there are: OTHER_TITLES are named, all of them when one more is left."""
        shown = self.other if len(self.other) <= OTHER_TITLES + 1 else self.other[:OTHER_TITLES]
        titles = [
            c.description
            + (f" ({KIND_WORDS[c.kind]})" if c.kind in KIND_WORDS and c.kind != FAIL else "")
            for c in shown
        ]
        return titles, len(self.other) - len(titles)


@dataclass
class Report:
    kata: str
    title: str
    file: str
    device: str
    checks: list[Check] = field(default_factory=list)  # in suite order, core before parity
    load_error: str | None = None
    stopped: str | None = None  # why the run stopped early, if it did
    finished: bool = False  # False in a report left behind by a run that died
    # Checks left out by -k or -m, per tier: they are not listed, and a tier with any left
    # out cannot be called solved.
    deselected: dict[Tier, int] = field(default_factory=lambda: {CORE: 0, PARITY: 0})
    grader_errors: list[str] = field(default_factory=list)  # the grader's own, never the learner's
    perf: dict[str, Any] | None = None  # --perf's measurements
    is_stub: bool | None = None  # the file is the untouched stub (None: read it to know)

    def tier(self, tier: Tier) -> list[Check]:
        return [c for c in self.checks if c.tier == tier]

    def tally(self, tier: Tier | None = None) -> tuple[int, int]:
        """(passed, counted) for a tier, or for every graded check; skipped checks do not
        count."""
        checks = [c for c in self.checks if c.tier != INFO] if tier is None else self.tier(tier)
        counted = [c for c in checks if c.outcome != Outcome.SKIPPED]
        return sum(c.outcome == Outcome.PASSED for c in counted), len(counted)

    def tier_solved(self, tier: Tier) -> bool:
        """Every check of the tier that ran passed (solved, if none was left out)."""
        passed, counted = self.tally(tier)
        return self.load_error is None and passed == counted

    def score(self, strict: bool = False) -> list[tuple[str, str, str]]:
        """The verdict's score line, a part per tier, for every renderer (terminal, notebook):
        (text before the mark, mark: "ok", "bad" or "none" when nothing was graded, text after)."""
        parts = []
        for tier in (CORE, PARITY):
            passed, counted = self.tally(tier)
            if not counted and not self.tier(tier):
                continue
            title = "torch parity" if tier == PARITY else TIER_TITLES[tier]
            mark = "none" if not counted else "ok" if self.tier_solved(tier) else "bad"
            after = ""
            if tier == CORE and (self.strict_solved if strict else self.solved):
                after = " solved"
            if tier == PARITY:
                after = " (required by --strict)" if strict else " (stretch)"
            parts.append((f"{title} {passed}/{counted} ", mark, after))
        return parts

    @property
    def skipped(self) -> int:
        """Graded checks that skipped (an information-only report skips by design: not one)."""
        return sum(c.outcome == Outcome.SKIPPED and c.tier != INFO for c in self.checks)

    @property
    def solved(self) -> bool:
        """The whole interview core ran and passes: the kata is solved."""
        return self.tally(CORE)[1] > 0 and self.tier_solved(CORE) and not self.deselected[CORE]

    @property
    def strict_solved(self) -> bool:
        return self.solved and self.tier_solved(PARITY) and not self.deselected[PARITY]

    @property
    def partial(self) -> bool:
        """Some checks were left out (-k, -m): no verdict on the kata."""
        return any(self.deselected.values())

    def selection_passes(self, strict: bool) -> bool:
        """A partial run passes when every selected check of the core (and parity) passes."""
        return self.tier_solved(CORE) and (not strict or self.tier_solved(PARITY))

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.outcome == Outcome.FAILED and c.tier != INFO]

    def ranked_failures(self) -> list[Check]:
        """Failures, most specific first: core before parity, broad checks after the others,
        then suite order, a failure that belongs to another check taking that check's place
        (after it). The first is the headline."""
        order = {id(c): i for i, c in enumerate(self.checks)}
        first: dict[str, int] = {}
        for i, c in enumerate(self.checks):
            first.setdefault(c.function, i)

        def rank(c: Check) -> tuple[bool, bool, int, bool, int]:
            at = order[id(c)]
            owner = at if c.belongs in ("", c.function) else first.get(c.belongs, at)
            # A broad check's failure, or one that belongs to a broad check, ranks as broad.
            broad = c.broad or self.checks[owner].broad
            return (c.tier != CORE, broad, owner, owner != at, at)

        return sorted(self.failed, key=rank)

    @property
    def not_started(self) -> bool:
        """The graded file is the stub as handed out: every failure is its NotImplementedError.
        The verdict says so instead of naming a headline, and offers no hint."""
        failed = self.failed
        return bool(failed) and all(c.kind == TODO for c in failed) and untouched(self)

    @property
    def headline(self) -> Check | None:
        ranked = self.ranked_failures()
        return ranked[0] if ranked else None

    def owner(self, check: Check) -> Check | None:
        """The check whose mistake `check` met (its fail_for), when that is another check of
        this report: the failure's title is that check's, though it passed on its own inputs
        (a race that shows only past the sizes the race check runs, say)."""
        if not check.belongs or check.belongs == check.function:
            return None
        owner = next((c for c in self.checks if c.function == check.belongs), None)
        # A torch-parity case of a core check's mistake (an empty batch that deadlocks, say)
        # keeps its own title: the core check, and the kata, are solved.
        return owner if owner is not None and owner.tier == check.tier else None

    def mistake(self, check: Check) -> tuple[str, str]:
        """A failure's title, as the headline says it: its owner's (Report.owner), with the
        words that say which check met it, or its own title and "".

        The checklist marks the owner passed (its own inputs did not show the mistake) and
        this check failed; the headline names the mistake and where it was met."""
        owner = self.owner(check)
        if owner is None:
            return check.description, ""
        return owner.description, f"its own check passed; met on the inputs of: {check.description}"

    def fold(self) -> Fold | None:
        """The failures as the verdict groups them under the headline (None without one)."""
        ranked = self.ranked_failures()
        if not ranked:
            return None
        head, same, reasons, other, later = ranked[0], [], [], [], []
        for c in ranked[1:]:
            reason = same_cause(head, c)
            if reason is not None:
                same.append(c)
                if reason not in reasons:
                    reasons.append(reason)
            else:
                (other if c.tier == head.tier else later).append(c)
        return Fold(head, same, reasons, other, later)

    def to_json(self, hints: int = 0) -> dict[str, Any]:
        """The report as JSON (the format the README documents for --report-json). Hints only
        when the learner asked for them (--hints N): then the first N steps of each failure's,
        as --all would print them."""
        data = asdict(self)
        extra = {name: data.pop(name) for name in ("grader_errors", "perf", "is_stub")}
        for check, saved in zip(self.checks, data["checks"], strict=True):
            shown = check.outcome == Outcome.FAILED  # a failure's hints: chosen for it
            saved["hints"] = check.hints[:hints] if shown else []
        passed, total = self.tally()
        core, parity = self.tally(CORE), self.tally(PARITY)
        headline = self.headline
        data.update(
            passed=passed,
            total=total,
            core={"passed": core[0], "total": core[1]},
            parity={"passed": parity[0], "total": parity[1]},
            solved=self.solved,
            strict_solved=self.strict_solved,
            partial=self.partial,
            headline=headline.name if headline else None,
            # The check whose mistake the headline shows: its owner's (Report.owner), or its own.
            mistake=(self.owner(headline) or headline).function if headline else None,
            untouched=untouched(self),  # the stub as handed out: no attempt yet
            grader_errors=extra["grader_errors"],
        )
        if extra["perf"] is not None:
            data["perf"] = extra["perf"]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        """The report that to_json wrote, or that a grading which never reached its checks
        left (no kata: only "finished", "checks" and "grader_errors"). What to_json derives
        (the tallies, solved, the headline) is derived again, the same; "untouched" is kept
        as it was when graded."""
        deselected = data.get("deselected") or {}
        return cls(
            data.get("kata", ""), data.get("title", ""), data.get("file", ""),
            data.get("device", ""), [Check.from_json(c) for c in data.get("checks", [])],
            load_error=data.get("load_error"), stopped=data.get("stopped"),
            finished=bool(data.get("finished")),
            deselected={tier: int(deselected.get(tier, 0)) for tier in (CORE, PARITY)},
            grader_errors=list(data.get("grader_errors") or []), perf=data.get("perf"),
            is_stub=data.get("untouched"),
        )  # fmt: skip


def unstarted_json(grader_errors: list[str]) -> dict[str, Any]:
    """The JSON of a grading that never reached a kata's checks: only the grader's errors."""
    return {"finished": True, "checks": [], "grader_errors": grader_errors}


def exit_code(report: Report, strict: bool) -> int:
    """SOLVED or NOT_SOLVED, for a grading that ran its checks: solved means the interview
    core passes (--strict: torch parity too); with -k or -m, as pytest, whether the selected
    checks pass. The child ends with it and the parent says it: one rule for both."""
    if report.partial:
        solved = report.selection_passes(strict)
    else:
        solved = report.strict_solved if strict else report.solved
    return SOLVED if solved else NOT_SOLVED


KIND_WORDS = {
    TODO: "not implemented",
    FAIL: "wrong values",
    CRASH: "an error",
    TIMEOUT: "timed out",
}


def untouched(report: Report) -> bool:
    """Whether the graded file is the kata's stub as handed out, decided by its content's hash:
    a file that merely still raises NotImplementedError somewhere has been started."""
    if report.is_stub is not None:
        return report.is_stub
    path = Path(report.file)
    try:
        content = (path if path.is_absolute() else registry.ROOT / path).read_text("utf-8")
        return pristine.untouched(registry.get(report.kata), content)
    except (KeyError, OSError, UnicodeDecodeError):
        return False
