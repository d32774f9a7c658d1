"""The verdict on a terminal: the checklist as checks finish, then the headline, the failures
folded under it, the score, and the next step offered.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import replace
from typing import TextIO

from norm_katas.engine import suggest
from norm_katas.engine.report.data import CORE, INFO, PARITY, TIER_TITLES, Check, Outcome, Report
from norm_katas.engine.suggest import TERMINAL

OUTPUT_LINES = 3  # lines of the learner's own prints shown under a check
HINT_KEY = "h"  # in watch mode, the key that grades again with the next hint step


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
        watch: bool = False,
    ) -> None:
        self.out = out or sys.stdout
        self.strict = strict  # --strict: torch parity is required, not a stretch goal
        self.hints = hints  # how many hint steps to show per failure: 0 none, 1 idea, 2 formula
        self.expand = expand  # --all: every failure with its message, not only the headline
        self.door = door  # where the options offered are typed
        # In a mock interview the learner cannot pass options: offer none of them there.
        self.in_mock = mock
        self.watch = watch  # watch mode: a key shows the next hint (practice.watch)
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
            step = "a hint" if not self.hints else "the formula as well"
            if self.watch:
                self.write(f"{self.dim}Stuck? Press {HINT_KEY} for {step}.{self.reset}")
                return
            more = suggest.option("--hints" if not self.hints else "--hints 2", self.door)
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
        self._failure(head, *report.mistake(head))
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

    def _failure(self, check: Check, title: str = "", met_by: str = "", indent: int = 0) -> None:
        pad = " " * indent
        title = title or check.description
        self.write(f"{pad}{self.red}✗{self.reset} {self.bold}{title}{self.reset}")
        if met_by:  # another check's failure: its title above, the check that met it here
            self.write(_indent(f"{self.dim}({met_by}){self.reset}", indent + 4))
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
