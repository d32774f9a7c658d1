"""Turn check outcomes into the learner-facing checklist (and a JSON record of it)."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import pytest

from grader.loader import display_path

TODO, FAIL, CRASH, TIMEOUT = "todo", "fail", "crash", "timeout"


@dataclass
class Check:
    name: str  # the test function, e.g. test_eps_inside_sqrt
    description: str  # first docstring line, e.g. "eps is added inside the square root"
    hints: list[str]  # the docstring's later paragraphs, idea first
    broad: bool = False  # a parity check that many mistakes fail: listed after specific ones
    outcome: str = "not run"  # passed | failed | skipped | not run
    kind: str = ""  # for failures: todo | fail | crash | timeout
    message: str = ""


@dataclass
class Report:
    kata: str
    title: str
    file: str
    device: str
    checks: list[Check] = field(default_factory=list)
    load_error: str | None = None
    stopped: str | None = None  # why the run stopped early, if it did
    finished: bool = False  # False in a report left behind by a run that died

    @property
    def passed(self) -> int:
        return sum(c.outcome == "passed" for c in self.checks)

    @property
    def counted(self) -> int:
        return sum(c.outcome != "skipped" for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(passed=self.passed, total=self.counted)
        return data


def describe(doc: str | None, fallback: str) -> tuple[str, list[str]]:
    """Split a check's docstring into its one-line description and its hint paragraphs."""
    if not doc or not doc.strip():
        return fallback.removeprefix("test_").replace("_", " "), []
    paragraphs = [" ".join(p.split()) for p in doc.strip().split("\n\n")]
    return paragraphs[0], [p for p in paragraphs[1:] if p]


def explain(excinfo: pytest.ExceptionInfo[BaseException], learner: Path | None) -> tuple[str, str]:
    """(kind, message) for a failed check, without a traceback."""
    e = excinfo.value
    text = str(e).strip()
    if isinstance(e, pytest.fail.Exception):
        if text.startswith("Timeout"):
            return TIMEOUT, (
                "this check did not finish in time: an infinite loop, or a very slow "
                "Python loop over elements?"
            )
        return FAIL, text
    if isinstance(e, AssertionError):
        # pytest appends its introspection after the author's message; keep the message.
        return FAIL, text.split("\nassert ")[0] or "an assertion failed"
    where = _learner_line(excinfo, learner)
    if isinstance(e, NotImplementedError) and where:
        return TODO, f"not implemented yet ({text or 'NotImplementedError'}{where})"
    if isinstance(e, SystemExit):
        return CRASH, f"your code called sys.exit({e.code!r}) during this check{where}"
    name = type(e).__name__
    if where:
        return CRASH, f"your code raised {name}: {text}{where}"
    return CRASH, f"{name}: {text}"


def _learner_line(excinfo: pytest.ExceptionInfo[BaseException], learner: Path | None) -> str:
    if learner is None:
        return ""
    target = str(learner.resolve())
    frames = [t for t in excinfo.traceback if str(Path(t.path).resolve()) == target]
    if not frames:
        return ""
    entry = frames[-1]
    line = str(entry.statement).strip().splitlines()[0] if entry.statement else ""
    return f", at {display_path(learner)} line {entry.lineno + 1}: {line}"


class Printer:
    """Writes the checklist as checks finish, then the failures and the verdict."""

    def __init__(self, out: TextIO | None = None, hints: int = 0) -> None:
        self.out = out or sys.stdout
        self.hints = hints  # how many hint steps to show per failure: 0 none, 1 idea, 2 formula
        color = self.out.isatty() and not os.environ.get("NO_COLOR")
        self.green, self.red, self.dim, self.bold, self.reset = (
            ("\033[32m", "\033[31m", "\033[2m", "\033[1m", "\033[0m") if color else ("",) * 5
        )

    def write(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def header(self, report: Report, note: str | None) -> None:
        self.write(
            f"{self.bold}{report.title}{self.reset}  ·  grading {report.file} on {report.device}"
        )
        if note:
            self.write(f"{self.dim}{note}{self.reset}")
        self.write()

    def check(self, check: Check, report: Report) -> None:
        if report.load_error:
            return  # one message about the file says it all
        if check.outcome == "passed":
            self.write(f"  {self.green}✓{self.reset} {check.description}")
        elif check.outcome == "skipped":
            self.write(f"  {self.dim}– {check.description} (skipped: {check.message}){self.reset}")
        else:
            self.write(f"  {self.red}✗{self.reset} {check.description}")

    def verdict(self, report: Report) -> None:
        failed = [c for c in report.checks if c.outcome == "failed"]
        not_run = [c for c in report.checks if c.outcome == "not run"]
        if report.load_error:
            self.write(f"\n{self.red}Your file could not be loaded{self.reset}, so no check ran:")
            self.write(f"  {report.load_error}")
        elif failed and all(c.kind == TODO for c in failed):
            self.write(
                f"\n{self.bold}Not started yet?{self.reset} {report.file} still raises "
                "NotImplementedError. Read its docstring, write __init__ and forward, "
                "then grade again."
            )
        elif failed:
            self.write(f"\n{self.bold}What to fix{self.reset}")
            groups: dict[str, list[Check]] = {}
            # Specific checks name the mistake; broad parity checks fail for any of them.
            for c in sorted(failed, key=lambda c: c.broad):  # one error in forward fails many
                groups.setdefault(c.message, []).append(c)  # checks: say it once
            shown_broad = False
            for message, checks in groups.items():
                first = checks[0]
                if first.broad and not shown_broad and any(not c.broad for c in failed):
                    note = "Broader checks, which may fail for the same reason:"
                    self.write(f"\n  {self.dim}{note}{self.reset}")
                    shown_broad = True
                more = (
                    f" (and {len(checks) - 1} more checks, same cause)" if len(checks) > 1 else ""
                )
                self.write(f"\n  {self.red}✗{self.reset} {first.description}{more}")
                self.write(_indent(message, 4))
                if first.kind == FAIL:
                    for step, hint in zip(
                        ("idea", "formula"), first.hints[: self.hints], strict=False
                    ):
                        self.write(_indent(f"{self.dim}Hint ({step}): {hint}{self.reset}", 4))
        if report.stopped:
            self.write(f"\n{self.red}Stopped early:{self.reset} {report.stopped}")
        if not_run and not report.load_error:
            self.write(f"{self.dim}{len(not_run)} check(s) did not run.{self.reset}")
        skipped = len(report.checks) - report.counted
        extra = f" ({skipped} skipped)" if skipped else ""
        all_pass = report.passed == report.counted and not not_run and not report.load_error
        color = self.green if all_pass else self.red
        self.write(
            f"\n{color}{self.bold}{report.passed}/{report.counted} checks passed{self.reset}{extra}"
        )
        if all_pass:
            self.write("All checks pass: your layer behaves like torch.nn's.")
        elif report.load_error or self.hints >= 2:
            pass
        elif any(c.kind == FAIL and c.hints for c in failed):
            more = "-- --hints" if not self.hints else "-- --hints 2"
            step = "a hint on each failure" if not self.hints else "the formula as well"
            self.write(f"{self.dim}Stuck? Grade again with {more} for {step}.{self.reset}")


def _indent(text: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + line for line in text.splitlines())
