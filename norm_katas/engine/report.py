"""Turn check outcomes into the learner-facing verdict (and a JSON record of it).

Checks come in two tiers: the interview core (what an interviewer checks at the whiteboard) and
torch parity (what torch.nn does beyond that). The verdict opens with one headline, the most
specific failure, then folds into one line the failures that share its cause, where there is
evidence of it (Report.fold), and names each of the others.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any, TextIO

import pytest

from norm_katas.content import pristine, registry
from norm_katas.engine import suggest
from norm_katas.engine.request import NOT_SOLVED, SOLVED
from norm_katas.engine.suggest import TERMINAL
from norm_katas.runtime.loader import MissingName, display_path, learner_frame, raised_in
from norm_katas.runtime.outcomes import TimedOut


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
OUTPUT_LINES = 3  # lines of the learner's own prints shown under a check
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
            return (c.tier != CORE, c.broad, owner, owner != at, at)

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


def describe(doc: str | None, fallback: str) -> tuple[str, list[str]]:
    """Split a check's docstring into its one-line description and its hint paragraphs."""
    if not doc or not doc.strip():
        return fallback.removeprefix("test_").replace("_", " "), []
    paragraphs = [" ".join(p.split()) for p in doc.strip().split("\n\n")]
    return paragraphs[0], [p for p in paragraphs[1:] if p]


# A hint is prose and maths, never a line of code (the README promises the solution code is not
# given away): no code markup, no attribute of self, no call of a dotted name (x.mean(...),
# nn.Parameter(...)), no keyword argument in a call, no statement. Naming an API in words ("an
# nn.Parameter", "register_buffer") and maths such as √(mean(x²) + ε) are fine.
CODE_IN_HINT = re.compile(
    r"`"  # code markup
    r"|\bself\."  # the module's own state, written as code
    r"|[A-Za-z_]\w*(?:\.\w+)+\("  # a call of a dotted name: x.float(), torch.ones(n)
    r"|\)\.\w+\("  # a chained call
    r"|\([^()]*\b[a-z_]\w*=[^=][^()]*\)"  # a keyword argument in a call: (x, keepdim=True)
    r"|\b(?:if|elif|while)\s[^:]*(?:==|!=|\bis\b)[^:]*:(?!\S)"  # a condition's header
    r"|\bfor\s+\w+\s+in\s+\w+\([^:]*:(?!\S)"  # a loop's header: for i in range(n):
    r"|\b(?:def|class)\s+\w+[(:]|\blambda\s*\w*:"  # a definition
    r"|\b(?:raise|return)\s+[A-Za-z_][\w.]*\("  # a statement with a call
    r"|^(?:import|from)\s+\w+"  # an import
)
# A setting written as name=value outside a call (dropout=0.0, affine=False) is how the stubs
# and titles name a configuration, and maths (μ, σ², √(mean(x²) + ε)) is how hints say a
# formula: neither is a line of code to copy.
# A hint paragraph that starts "[phrase] " applies when the failure's message contains the
# phrase: a check that can fail for several reasons gives the hints of the one that failed.
CONDITION = re.compile(r"^\[([^\]]+)\]\s*")
# Errors that say shapes do not line up, dtypes disagree, or devices differ: the stub's pitfall
# on that subject fits better than the check's own hints, which assume the code ran.
CRASH_SUBJECTS = (
    (
        re.compile(
            r"size of tensor \w+ \(\d+\) must match|shape .* is invalid|cannot be multiplied"
            r"|dimension out of range|not broadcastable|expanded size|view size"
            r"|shapes? .*(?:mismatch|do not match|must match)",
            re.I,
        ),
        ("keepdim", "broadcast"),
        "The shapes in your forward do not line up: a reduction drops the dims it reduces unless "
        "it keeps them as size 1, and then the statistics no longer broadcast against x. "
        "Print the shape of each intermediate tensor.",
    ),
    (
        re.compile(r"expected scalar type|dtype|can't be cast|type mismatch", re.I),
        ("dtype", "upcast"),
        "Two tensors of different dtypes met: every tensor forward makes must take x's dtype, "
        "or the computation dtype, and the result is cast back to x's dtype at the end.",
    ),
    (
        re.compile(r"same device|device", re.I),
        ("device",),
        "Two tensors on different devices met: every tensor forward uses must live on x's "
        "device, either registered state that moves with the module or created there.",
    ),
)
CRASH_HINT = (
    "Your code raised an error before the check could compare anything. Call your module "
    "yourself on a small input of the same kind and read which line raises, and the shapes "
    "and dtypes it sees there."
)
# An error with no line of the learner's file on its way: the check's own code raised it,
# working with what the learner's code returned or kept (a missing attribute, say).
OUTSIDE_HINT = (
    "The error was raised outside your file, by the check itself as it used what your code "
    "returned or kept: compare that with what the contract asks for. If the message names "
    "nothing of yours, see 'When the grader itself fails' in docs/troubleshooting.md."
)
TODO_HINT = (
    "This check reached code that still raises NotImplementedError: write that part (the "
    "message names the line), then grade again."
)
TIMEOUT_HINT = (
    "Each check gives your code a few seconds: a loop that never ends, or a Python loop over "
    "every element of a large input, runs past them. Reduce over whole dimensions at once."
)


def choose_hints(
    hints: list[str], kind: Kind, message: str, pitfalls: str = "", missing: bool = False
) -> list[str]:
    """The hints that fit this failure, idea first, chosen from the check's docstring
    paragraphs (`hints`, as describe() split them) and the stub's pitfalls section.

    A wrong value: the paragraphs whose "[phrase]" the message contains, else the untagged
    ones. A crash: the pitfall on the error's subject (shapes, dtypes, devices), else a word on
    reading the error. A missing name (`missing`) is no mistake of the check's: none."""
    if missing:
        return []
    if kind == FAIL:
        tagged = [
            (m[1] if (m := CONDITION.match(h)) else None, CONDITION.sub("", h)) for h in hints
        ]
        for phrase in dict.fromkeys(t for t, _ in tagged if t):
            if phrase in message:
                return [h for t, h in tagged if t == phrase]
        return [h for t, h in tagged if t is None]
    if kind == CRASH:
        bullets = [" ".join(b.split()) for b in re.split(r"^\* ", pitfalls, flags=re.M)[1:]]
        for pattern, words, fallback in CRASH_SUBJECTS:
            if pattern.search(message):
                fits = [
                    b for b in bullets
                    if any(w in b.lower() for w in words) and not CODE_IN_HINT.search(b)
                ]  # fmt: skip
                return [fits[0] if fits else fallback]
        return [CRASH_HINT if message.startswith("your code") else OUTSIDE_HINT]
    if kind == TODO:
        return [TODO_HINT]
    if kind == TIMEOUT:
        return [TIMEOUT_HINT]
    return []


def explain(excinfo: pytest.ExceptionInfo[BaseException], learner: Path | None) -> tuple[Kind, str]:
    """(kind, message) for a failed check, without a traceback."""
    e = excinfo.value
    text = str(e).strip()
    if isinstance(e, pytest.fail.Exception):
        if isinstance(e, TimedOut):  # the learner's code ran out of time: the check says where
            return TIMEOUT, text
        if isinstance(e, MissingName):  # not this check's mistake: no hint for it
            return CRASH, text
        return FAIL, text
    if _authors_assertion(excinfo, learner):
        # pytest appends its introspection after the author's message; keep the message.
        return FAIL, text.split("\nassert ")[0] or "an assertion failed"
    where = _learner_line(excinfo, learner)
    if isinstance(e, NotImplementedError) and where:
        return TODO, f"not implemented yet ({text or 'NotImplementedError'}{where})"
    if isinstance(e, SystemExit):
        return CRASH, f"your code called sys.exit({e.code!r}) during this check{where}"
    name = getattr(e, "shown_as", type(e).__name__)
    said = f": {text}" if text else ""  # `raise KeyboardInterrupt` says nothing
    if where:
        return CRASH, f"your code raised {name}{said}{where}"
    return CRASH, f"{name}{said}"


def raised_at(excinfo: pytest.ExceptionInfo[BaseException], learner: Path | None) -> str:
    """For an exception out of the learner's code, its type and line there ("RuntimeError at
    katas/layernorm.py line 50"; a time limit's, "time-out at ..."), else "": the author's
    failures (an assertion, fail()) are not the learner's exceptions."""
    e = excinfo.value
    if _authors_assertion(excinfo, learner) or (
        isinstance(e, pytest.fail.Exception) and not isinstance(e, TimedOut)
    ):
        return ""
    frame = learner_frame(excinfo.tb, learner) if learner is not None else None
    if frame is None:
        return ""
    name = "time-out" if isinstance(e, TimedOut) else getattr(e, "shown_as", type(e).__name__)
    return f"{name} at {display_path(learner)} line {frame.lineno}"


def _authors_assertion(excinfo: pytest.ExceptionInfo[BaseException], learner: Path | None) -> bool:
    """An AssertionError of the suite's (a check's `assert`), not of the learner's code: one
    that an `assert` in the learner's file raised is reported as their code's exception."""
    if not isinstance(excinfo.value, AssertionError):
        return False
    return learner is None or not raised_in(excinfo.tb, learner)


def _learner_line(excinfo: pytest.ExceptionInfo[BaseException], learner: Path | None) -> str:
    frame = learner_frame(excinfo.tb, learner) if learner is not None else None
    if frame is None:
        return ""
    return f", at {display_path(learner)} line {frame.lineno}: {(frame.line or '').strip()}"


class Printer:
    """Writes the checklist as checks finish, then the headline and the verdict."""

    def __init__(
        self,
        out: TextIO | None = None,
        hints: int = 0,
        expand: bool = False,
        strict: bool = False,
        door: str = TERMINAL,
        mock: bool = False,
    ) -> None:
        self.out = out or sys.stdout
        self.strict = strict  # --strict: torch parity is required, not a stretch goal
        self.hints = hints  # how many hint steps to show per failure: 0 none, 1 idea, 2 formula
        self.expand = expand  # --all: every failure with its message, not only the headline
        self.door = door  # where the options offered are typed
        # In a mock interview the learner cannot pass options: offer none of them there.
        self.in_mock = mock
        self.tier_shown: str | None = None
        # On a terminal, the check that is running shows on a line the next output replaces.
        self.live = self.out.isatty()
        self.showing_running = False
        color = self.out.isatty() and not os.environ.get("NO_COLOR")
        self.green, self.red, self.dim, self.bold, self.reset = (
            ("\033[32m", "\033[31m", "\033[2m", "\033[1m", "\033[0m") if color else ("",) * 5
        )

    def write(self, text: str = "") -> None:
        self.erase()
        self.out.write(text + "\n")
        self.out.flush()

    def running(self, check: Check, report: Report) -> None:
        """The check that starts now, until it ends: a grading that takes long shows where."""
        if not self.live or report.load_error:
            return
        self._tier(check)
        width = shutil.get_terminal_size().columns - 5  # one line, or "\r" cannot replace it
        text = (
            check.description
            if len(check.description) <= width
            else check.description[: width - 1] + "…"
        )
        self.out.write(f"  {self.dim}… {text}{self.reset}")
        self.out.flush()
        self.showing_running = True

    def erase(self) -> None:
        """Remove the running check's line, if it shows."""
        if self.showing_running:
            self.showing_running = False
            self.out.write("\r\033[K")
            self.out.flush()

    def _tier(self, check: Check) -> None:
        if check.tier != self.tier_shown:
            self.tier_shown = check.tier
            self.write(f"\n{self.bold}{TIER_TITLES[check.tier]}{self.reset}")

    def header(self, report: Report, note: str | None) -> None:
        self.write(
            f"{self.bold}{report.title}{self.reset}  ·  grading {report.file} on {report.device}"
        )
        if note:
            self.write(f"{self.dim}{note}{self.reset}")

    def check(self, check: Check, report: Report) -> None:
        self.erase()
        if report.load_error:
            return  # one message about the file says it all
        self._tier(check)
        if check.tier == INFO:  # a report, not a check: its text is the message
            self.write(f"  {self.dim}{check.description}: {check.message}{self.reset}")
        elif check.outcome == Outcome.PASSED:
            self.write(f"  {self.green}✓{self.reset} {check.description}")
        elif check.outcome == Outcome.SKIPPED:
            self.write(f"  {self.dim}– {check.description} (skipped: {check.message}){self.reset}")
        else:
            self.write(f"  {self.red}✗{self.reset} {check.description}")
        if check.output:
            self._output(check.output)

    def _output(self, output: str) -> None:
        """The learner's own prints during a check, trimmed: a print is never lost silently."""
        lines = output.rstrip("\n").splitlines()
        shown = [line if len(line) <= 100 else line[:99] + "…" for line in lines[:OUTPUT_LINES]]
        for line in shown:
            self.write(f"      {self.dim}│ {line}{self.reset}")
        if len(lines) > OUTPUT_LINES or any(len(line) > 100 for line in lines):
            more = len(lines) - OUTPUT_LINES
            extra = f"{more} more line{'s' * (more != 1)} printed; " if more > 0 else ""
            self.write(f"      {self.dim}│ ({extra}-- -s shows all your output){self.reset}")

    def verdict(self, report: Report) -> None:
        failed = report.ranked_failures()
        if report.load_error:
            self.write(f"\n{self.red}Your file could not be loaded{self.reset}, so no check ran:")
            self.write(_indent(report.load_error, 2))
            self.write(f"\n{self.red}{self.bold}Not graded.{self.reset}")
            return
        if report.not_started:
            self.write(
                f"\n{self.bold}Not started yet?{self.reset} {report.file} still raises "
                "NotImplementedError. Read its docstring, write the code it asks for, "
                "then grade again."
            )
        elif failed:
            self._headline(report, failed)
        if report.stopped:
            self.write(f"\n{self.red}Stopped early:{self.reset} {report.stopped}")
        not_run = sum(c.outcome == Outcome.NOT_RUN for c in report.checks)
        if not_run:
            self.write(f"{self.dim}{not_run} check(s) did not run.{self.reset}")
        if left_out := sum(report.deselected.values()):
            self.write(
                f"{self.dim}Only the selected checks ran ({left_out} left out by -k or -m): "
                f"grade without a selection for the verdict on the kata.{self.reset}"
            )
        self._score(report)
        headline = report.headline
        if report.strict_solved and report.skipped:  # not "every": a skip is no pass
            were = "was" if report.skipped == 1 else "were"
            self.write(
                f"Every check that ran passes, the stretch goals included; {report.skipped} "
                f"{were} skipped, as said above."
            )
        elif report.strict_solved:
            self.write("Every check passes, the stretch goals included.")
        elif self.in_mock or report.not_started:
            pass  # no hints during a mock (the pitfalls come after it), nor before a start
        elif (
            self.hints < 2
            and headline is not None
            and len(headline.hints) > self.hints  # a step is left to show
            and (headline.tier == CORE or self.strict)  # a solved core is not stuck
        ):
            more = suggest.option("--hints" if not self.hints else "--hints 2", self.door)
            step = "a hint" if not self.hints else "the formula as well"
            self.write(f"{self.dim}Stuck? Grade again with {more} for {step}.{self.reset}")

    def _headline(self, report: Report, failed: list[Check]) -> None:
        head = failed[0]
        if head.tier == PARITY:
            core = "Interview core solved." if report.solved else "The selected core checks pass."
            goal = (
                "--strict requires torch parity too:"
                if self.strict
                else "Stretch goal, torch parity:"
            )
            self.write(f"\n{self.bold}{core}{self.reset} {goal}")
        else:
            self.write("")
        self._failure(head)
        if self.expand:
            self._expanded(failed[1:], head)
            return
        fold = report.fold()
        assert fold is not None  # there is a headline
        each = "" if self.in_mock else f" ({suggest.option('--all', self.door)} shows each)"
        if same := fold.same_text():
            self.write(f"  {self.dim}{same}{each if not fold.other else ''}.{self.reset}")
        if other := fold.other_text():
            self.write(f"  {self.dim}{other}{each}:{self.reset}")
            titles, more = fold.other_titles()
            for title in titles:
                self.write(f"    {self.dim}· {title}{self.reset}")
            if more:
                self.write(f"    {self.dim}and {more} more{self.reset}")
        if later := fold.later:
            them = "" if self.in_mock else f" ({suggest.option('--all', self.door)} shows them)"
            self.write(
                f"  {self.dim}Torch parity (stretch) has {len(later)} failing check"
                f"{'s' * (len(later) != 1)} too; fix the core first{them}.{self.reset}"
            )

    def _failure(self, check: Check, indent: int = 0) -> None:
        pad = " " * indent
        self.write(f"{pad}{self.red}✗{self.reset} {self.bold}{check.description}{self.reset}")
        self.write(_indent(check.message, indent + 4))
        # Hints that fit the failure: record time chose them (choose_hints), for every kind.
        for step, hint in zip(("idea", "formula"), check.hints[: self.hints], strict=False):
            self.write(_indent(f"{self.dim}Hint ({step}): {hint}{self.reset}", indent + 4))

    def _expanded(self, others: list[Check], head: Check) -> None:
        if not others:
            return
        self.write(f"\n{self.bold}Every other failure{self.reset}")
        # One error in forward fails many checks: its message is said once, and the checks that
        # share it are listed right under it (under the headline's, first), so that "the same
        # message" is always the one just above.
        first = {head.message: -1}
        for i, check in enumerate(others):
            first.setdefault(check.message, i)
        said = [head.message]
        for check in sorted(others, key=lambda check: first[check.message]):
            if check.message in said:
                same = "same message as the headline's" if check.message == head.message else ""
                mark = f"{self.red}✗{self.reset}"
                self.write(f"\n  {mark} {check.description} ({same or 'same message'})")
                continue
            # One mistake met on other inputs: its evidence differs, its explanation and advice
            # are the same sentences again. Those are said once.
            cut = min(_shared_tail(check.message, earlier) for earlier in said)
            said.append(check.message)
            if cut < len(check.message):
                shown = f"{check.message[:cut].rstrip()} (The rest of this message is as above.)"
                check = replace(check, message=shown)
            self.write("")
            self._failure(check, indent=2)

    def _score(self, report: Report) -> None:
        marks = {
            "ok": f"{self.green}✓{self.reset}",
            "bad": f"{self.red}✗{self.reset}",
            "none": f"{self.dim}–{self.reset}",  # every check skipped: nothing was graded
        }
        parts = [f"{a}{marks[m]}{b}" for a, m, b in report.score(self.strict)]
        extra = f"  {self.dim}({report.skipped} skipped){self.reset}" if report.skipped else ""
        self.write(f"\n{self.bold}{' · '.join(parts)}{self.reset}{extra}")


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


# Where a sentence of a message ends: at . ! or ? before the capital that starts the next one.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_TAIL_MIN = 60  # characters: shorter shared endings are said again, not referred to


def _shared_tail(message: str, earlier: str) -> int:
    """Where the longest run of whole sentences that ends `message` and ends `earlier` too
    begins, never at the start (the first sentence is the evidence, said each time);
    len(message) when they share no ending of _TAIL_MIN characters or more."""
    for start in (m.end() for m in _SENTENCE_END.finditer(message)):
        tail = message[start:]
        if len(tail) < _TAIL_MIN:
            break
        before = earlier[: -len(tail)] if earlier.endswith(tail) else None
        if before is not None and before[-1:].isspace() and before.rstrip()[-1:] in ".!?":
            return start
    return len(message)


def _indent(text: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + line for line in text.splitlines())
