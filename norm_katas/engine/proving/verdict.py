"""What the learner's tests did on each candidate, and the verdict made of it.

A correct candidate (the reference, a catalogue `ok_` file) on which a test fails is a false
alarm. A mistake or a mutant on which some test fails is caught. The kata is solved in this
mode when no test raises a false alarm and the tests catch every interview mistake; the
mutants are the stretch.
"""

from __future__ import annotations

import ast
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from norm_katas.content import candidates
from norm_katas.engine.report.hints import CONDITION, describe
from norm_katas.runtime import processes

if TYPE_CHECKING:
    from norm_katas.engine.request import Request


@dataclass
class Alarm:
    """A test that failed on a correct layer."""

    test: str
    layer: str  # the layer, in words
    message: str


@dataclass
class Mistake:
    """One interview mistake of the catalogue, and whether the tests caught it."""

    key: str
    words: str
    caught_by: str | None  # the first test that failed on it
    check: str | None = None  # the hidden check that names it (its hints come from there)


@dataclass
class Verdict:
    kata: str
    file: str
    tests: list[str] = field(default_factory=list)  # the tests that take the layer
    collected: list[str] = field(default_factory=list)  # every test in the file
    alarms: list[Alarm] = field(default_factory=list)
    mistakes: list[Mistake] = field(default_factory=list)
    mutants_caught: int = 0
    mutants: int = 0
    layers: int = 0  # the candidates run
    load_error: str | None = None  # the file did not load: pytest's collection error
    stopped: str | None = None  # why the wrong layers were not run (a hang on a correct one)
    grader_errors: list[str] = field(default_factory=list)
    # Tests the engine could not judge on some layer (Triton's interpreter gets an operation
    # they ran wrong), by test: why. Neither a catch nor a false alarm.
    unjudged: dict[str, str] = field(default_factory=dict)
    # For the authors' tool only (tools/prove_tests.py), never shown to a learner: the mutants
    # that passed every test, by key (their keys quote the reference's code).
    survivors: list[str] = field(default_factory=list, repr=False)

    @property
    def caught(self) -> int:
        return sum(m.caught_by is not None for m in self.mistakes)

    @property
    def solved(self) -> bool:
        return (
            not self.load_error
            and not self.stopped
            and not self.grader_errors
            and bool(self.tests)
            and not self.alarms
            and self.caught == len(self.mistakes)
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["survivors"]
        data |= {"caught": self.caught, "solved": self.solved, "mode": "tests"}
        return data


class Run:
    """The outcomes read so far from the children's lines."""

    def __init__(self, found: list[candidates.Candidate]) -> None:
        self.found = found
        self.failures: dict[int, list[tuple[str, str]]] = {}  # candidate -> (test, message)
        self.ran: set[int] = set()
        self.collected: list[str] = []
        self.bound: list[str] = []
        self.load_error: str | None = None
        self.grader_errors: list[str] = []
        self.unjudged: dict[str, str] = {}  # test -> why the engine could not judge it
        self.logs: list[Path] = []  # the children's lines, one file each
        # A test that ran out of time or ended the process on a correct layer: the others are
        # not run, as it would do the same there.
        self.fatal: str | None = None

    def alarming(self) -> set[str]:
        """The tests that failed on a correct layer so far."""
        return {
            test
            for index, failed in self.failures.items()
            if self.found[index].kind == "correct"
            for test, _ in failed
        }

    def read(self, log: Path, indices: list[int], code: int, stalled: bool) -> list[int]:
        """Take in a child's lines; the candidates still to run, if it ended before them."""
        current: int | None = None
        finished = False
        for line in log.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short by a kill
            if "loaded" in record:
                current = indices[record["loaded"]]
                self.ran.add(current)
            elif "candidate" in record:
                index = indices[record["candidate"]]
                if "unjudged" in record:
                    self.unjudged.setdefault(record["test"], record["unjudged"])
                if record["outcome"] == "failed":
                    message = record.get("message", "")
                    self.failures.setdefault(index, []).append((record["test"], message))
                    if record.get("kind") == "timeout" and self.found[index].kind == "correct":
                        where = message.split("still in your code at ", 1)[-1]
                        at = f" (it was at {where})" if where != message else ""
                        self.fatal = self.fatal or (
                            f"{record['test']} did not finish in its time limit on "
                            f"{describe_layer(self.found[index].words)}{at}"
                        )
            elif "collected" in record:
                self.collected, self.bound = record["collected"], record["take_the_layer"]
            elif "collect_error" in record:
                self.load_error = self.load_error or record["collect_error"]
            elif "grader_error" in record:
                self.grader_errors.append(record["grader_error"])
            elif record.get("finished"):
                finished = True
        if finished or self.load_error or self.grader_errors:
            return []
        if current is None:  # it ended before loading any: the grader's failure
            self.grader_errors.append(
                f"a test process ended ({processes.exit_status(code)}) before testing any layer"
            )
            return []
        how = (
            "did not finish in time (no test ended for minutes)"
            if stalled
            else f"ended the process abruptly ({processes.exit_status(code)})"
        )
        self.failures.setdefault(current, []).append(("(the whole file)", f"the test run {how}"))
        if self.found[current].kind == "correct":
            self.fatal = self.fatal or (
                f"your tests {how} on {describe_layer(self.found[current].words)}"
            )
            return []
        return indices[indices.index(current) + 1 :]

    def verdict(self, request: Request) -> Verdict:
        verdict = Verdict(
            request.kata.name, str(request.file), sorted(self.bound), sorted(self.collected),
            load_error=self.load_error, grader_errors=self.grader_errors,
        )  # fmt: skip
        if self.load_error or self.grader_errors:
            return verdict
        verdict.stopped = self.fatal
        verdict.unjudged = dict(self.unjudged)
        verdict.layers = len(self.ran)
        alarming = self.alarming()
        for index, candidate in enumerate(self.found):
            failed = self.failures.get(index, [])
            if candidate.kind != "correct":  # a test that fails on a correct layer catches nothing
                failed = [(test, message) for test, message in failed if test not in alarming]
            if candidate.kind == "correct":
                verdict.alarms += [Alarm(test, candidate.words, msg) for test, msg in failed]
            elif candidate.kind == "mistake":
                first = failed[0][0] if failed else None
                verdict.mistakes.append(
                    Mistake(candidate.key, candidate.words, first, candidate.check)
                )
            else:
                verdict.mutants += 1
                verdict.mutants_caught += bool(failed)
                if not failed:
                    verdict.survivors.append(candidate.key.removeprefix("mutant:"))
        return verdict


def describe_layer(words: str) -> str:
    """A correct layer, as the report names it: never by its code."""
    if words == "the reference solution":
        return words
    return f"a correct layer ({words})"


def hints(kata_suite: Path, check: str | None) -> list[str]:
    """The steps of a hint for a missed mistake: the property to test (the hidden check's
    title), then where it shows (the check's first paragraph of explanation). Never test code,
    and never the layer's fix (the check's later paragraphs)."""
    if check is None:
        return []
    for node in ast.parse(kata_suite.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name == check:
            title, paragraphs = describe(ast.get_docstring(node), check)
            plain = [p for p in paragraphs if not CONDITION.match(p)]
            lead = title[0].lower() if title[1:2].islower() else title[0]
            steps = [f"Test that {lead}{title[1:].rstrip('.')}."]
            if plain:
                steps.append(f"Where it shows: {plain[0]}")
            return steps
    return []
