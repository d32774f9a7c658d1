"""A grading request: what one grading is asked to do, parsed and checked once, at the door.

Every door builds one: the command line (`python -m norm_katas grade`, which nox runs) with
`Request.parse`, the mock and the self-tests' server with `Request.create`, and the pytest
plugin, when pytest runs a suite directly, from its own options with `Request.create` too.
From there on it travels as data: to the grading's child (in memory across a fork, as JSON
across a spawn), to the plugin, and to the warm server. Nobody reads the arguments again.

`--impl` is resolved in `resolve_impl`, `--device` in `resolve_device` and `--report-json` in
`resolve_report`, nowhere else.
Importing this module imports neither torch nor pytest.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from norm_katas.content import registry
from norm_katas.engine import options
from norm_katas.engine.suggest import TERMINAL
from norm_katas.runtime import CHECK_TIMEOUT_S

# Exit codes of `python -m norm_katas grade` and of the nox kata sessions (see the README).
SOLVED, NOT_SOLVED, USAGE, GRADER_FAILED = 0, 1, 2, 3
DEVICE = re.compile(r"cpu|mps|cuda(:\d+)?")


class UsageError(Exception):
    """The request cannot be graded as given (exit status 2); str() says what to fix."""


def invoked_from() -> Path:
    """Where the user ran the command: their relative paths are taken from there."""
    return Path(os.environ.get("NORM_KATAS_INVOKED_FROM", Path.cwd()))


def resolve_impl(
    kata: registry.Kata, impl: str | None, base: Path | None = None, tests: bool = False
) -> Path:
    """Where the file to grade is: --impl katas (default), solutions, a folder, or a file.
    With `tests` (the test-writing mode) the learner's test file: tests/test_<stem>.py there.

    A relative path is taken from `base`: the folder the user ran nox from.
    """
    if impl in (None, "", "katas"):
        return kata.tests_stub if tests else kata.stub
    if impl == "solutions":
        return kata.tests_solution if tests else kata.solution
    path = Path(impl).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    if path.is_dir():
        return path / (kata.tests_file if tests else kata.file)
    return path


def resolve_report(report_json: str | None, base: Path) -> Path | None:
    """--report-json, absolute, checked before grading: its folder must exist and take a file,
    so that a verdict is never graded only to be lost at the end."""
    if report_json is None:
        return None
    path = Path(os.path.abspath(base / Path(report_json).expanduser()))
    if path.is_dir():
        raise UsageError(f"--report-json {report_json}: {path} is a folder; name a file in it.")
    if not path.parent.is_dir():
        raise UsageError(
            f"--report-json {report_json}: the folder {path.parent} does not exist; "
            "create it first, or name a file in a folder that exists."
        )
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"--report-json {report_json}: {path} cannot be written here.")
    return path


def resolve_device(device: str | None) -> str:
    """--device, checked and spelled one way: cpu (default), cuda, cuda:N or mps. Whether this
    machine has it is the plugin's to say, in the grading (the parent never touches CUDA)."""
    if device is None:
        return "cpu"
    if not DEVICE.fullmatch(device.lower()):
        raise UsageError(f"--device {device}: expected cpu, cuda or mps.")
    return device.lower()


@dataclass(frozen=True)
class Request:
    kata: registry.Kata
    file: Path  # the file to grade, absolute
    device: str = "cpu"  # as resolve_device spells it
    strict: bool = False  # solved only when torch parity passes too
    hints: int = 0  # hint steps shown per failure: 0 none, 1 the idea, 2 the formula too
    expand: bool = False  # --all: every failure, not only the headline
    perf: bool = False
    report_json: Path | None = None  # where the JSON verdict goes, absolute
    timeout: float = CHECK_TIMEOUT_S  # CPU seconds per check
    keyword: str | None = None  # -k
    marker: str | None = None  # -m
    pytest_args: tuple[str, ...] = ()  # pytest's own options, passed through (-x, -s, ...)
    checklist: bool = True  # the learner-facing checklist instead of pytest's output
    watch: bool = False  # regrade on every save (the command line's --watch)
    tests: bool = False  # the test-writing mode: `file` is the learner's tests (engine.proving)
    mutants: bool = (
        True  # with tests: the mutants too (the self-tests leave them to nox -s mutants)
    )
    door: str = TERMINAL  # where the learner asked: the commands suggested are typed there
    mock: bool = False  # a mock interview's grading: no options are offered (none can be passed)
    # Checks (by name) to run before the others, every check still runs unless -x stops at a
    # failure: nox -s mutants runs first the checks that killed mutants like this one. The
    # report lists the checks in the suite's order all the same.
    first: tuple[str, ...] = ()
    # Whether the checks may run in two processes where the suite asks (engine.shards); False
    # runs them in one, as the self-tests do to prove that both give the same verdict.
    shared: bool = True

    @classmethod
    def create(
        cls,
        kata: registry.Kata,
        impl: str | None = None,
        *,
        base: Path | None = None,
        device: str | None = None,
        report_json: str | None = None,
        **settings: Any,
    ) -> Request:
        """A request with --impl, --device and --report-json resolved (paths from `base`,
        default where the user ran the command). Raises UsageError for a wrong device or a
        --report-json that cannot be written."""
        base = base or invoked_from()
        return cls(
            kata,
            Path(os.path.abspath(resolve_impl(kata, impl, base, settings.get("tests", False)))),
            device=resolve_device(device),
            report_json=resolve_report(report_json, base),
            **settings,
        )

    @classmethod
    def parse(
        cls, kata: registry.Kata, args: list[str], prog: str = "", base: Path | None = None
    ) -> Request:
        """The request the command line's options make, or UsageError saying what is wrong
        (an unknown option, with the closest name; a value of the wrong kind; a file that does
        not exist; a device). `prog`: the command that lists the options (--help)."""
        try:
            given = options.scan(args, prog)
        except options.OptionError as e:
            raise UsageError(str(e)) from None
        values: dict[str, Any] = {}
        passed: list[str] = []
        for option, value in given:
            name = option.flags[-1]
            if name in ("--strict", "--strict-parity"):
                values["strict"] = True
            elif name == "--hints":
                values["hints"] = int(value) if value else 1
            elif name == "--all":
                values["expand"] = True
            elif name in ("--perf", "--watch", "--tests"):
                values[name[2:]] = True
            elif name in ("--impl", "--device"):
                values[name[2:]] = value
            elif name == "--report-json":
                values["report_json"] = value
            elif name == "--timeout":
                values["timeout"] = float(value or CHECK_TIMEOUT_S)
            elif name in ("-k", "-m"):
                values["keyword" if name == "-k" else "marker"] = value
            elif name != "--checklist":  # the checklist is a grading's output anyway
                passed.append(_token(option, value))
        impl = values.pop("impl", None)
        tests = values.get("tests", False)
        if tests and not kata.tests_pristine.exists():
            ready = [k.name for k in registry.load() if k.tests_pristine.exists()]
            raise UsageError(
                f"The test-writing mode (--tests) is not ready for {kata.name} yet; it is for "
                f"{', '.join(ready)}."
            )
        unfit = [f for o, _ in given for f in o.flags if f in NOT_FOR_TESTS] if tests else []
        if unfit:
            raise UsageError(f"{unfit[0]} is for grading a layer; {NOT_FOR_TESTS[unfit[0]]}")
        if not (path := resolve_impl(kata, impl, base or invoked_from(), tests)).is_file():
            if tests and impl in (None, "", "katas"):
                raise UsageError(
                    f"{path} does not exist: your tests of {kata.name} go there. Start from the "
                    f"stub: `{_reset_hint(kata)}` puts it in place."
                )
            raise UsageError(f"{path} does not exist: check the path given to --impl.")
        return cls.create(kata, impl, base=base, pytest_args=tuple(passed), **values)

    @property
    def selection(self) -> str:
        """The checks asked for, as the user typed it: "-k eps -m parity" ("": every check)."""
        chosen = (("-k", self.keyword), ("-m", self.marker))
        return " ".join(f"{flag} {value}" for flag, value in chosen if value)

    @property
    def reference(self) -> bool:
        """The kata's reference solution is graded: no attempt of the learner's."""
        return self.file == Path(os.path.abspath(self.kata.solution))

    def pytest_argv(self) -> list[str]:
        """pytest's own options for this grading (the plugin takes the rest from the request)."""
        chosen = (("-k", self.keyword), ("-m", self.marker))
        selection = [f"{flag}{value}" for flag, value in chosen if value is not None]
        return [f"--timeout={self.timeout!r}", *selection, *self.pytest_args]

    def to_json(self) -> str:
        data = asdict(self)
        data["kata"] = self.kata.name
        for name in ("file", "report_json"):
            data[name] = None if data[name] is None else str(data[name])
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> Request:
        data = json.loads(text)
        known = {f.name for f in fields(cls)}
        data = {k: v for k, v in data.items() if k in known}
        data["kata"] = registry.get(data["kata"])
        data["file"] = Path(data["file"])
        data["report_json"] = data["report_json"] and Path(data["report_json"])
        data["pytest_args"] = tuple(data["pytest_args"])
        data["first"] = tuple(data.get("first", ()))
        return cls(**data)


# Options that have no meaning for a test file, and why (the test-writing mode).
NOT_FOR_TESTS = {
    "--device": "your tests choose the device they run on.",
    "--perf": "there is no layer of yours to time here.",
    "--strict": "torch parity is the layer's stretch; your tests' stretch is the mutants.",
    "-k": "every test of yours runs against every layer.",
    "-m": "every test of yours runs against every layer.",
    "-x": "every test of yours runs against every layer.",
    "--maxfail": "every test of yours runs against every layer.",
}


def _reset_hint(kata: registry.Kata) -> str:
    from norm_katas.engine import suggest

    return suggest.command("reset", kata.name, "--tests")


def _token(option: options.Option, value: str | None) -> str:
    """One pytest option as one argument: -kEXPR, --maxfail=N, -x (a value never reads as an
    option of its own, even one that starts with -)."""
    flag = option.flags[-1] if option.flags[-1].startswith("--") else option.flags[0]
    if value is None:
        return flag
    return f"{flag}={value}" if flag.startswith("--") else f"{flag}{value}"
