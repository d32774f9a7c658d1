"""The grading options: defined once here, read by the plugin (pytest_addoption), by the parse
every door makes before a grading starts (`scan`, which engine.request turns into a request;
`problem` for nox, before it builds anything), and by `--help` (`help_text`).

Importing this module imports neither torch nor pytest: a mistyped option is answered at once,
"did you mean" included, before the grader warms up.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]  # the first is the name shown; e.g. ("-x", "--exitfirst")
    help: str
    takes: str = ""  # "": a flag; "value": one value always; "optional": a value may follow
    metavar: str = ""
    kind: type = str  # the value's type, checked before grading
    choices: tuple[str, ...] = ()
    plugin: dict[str, Any] | None = None  # pytest_addoption's keywords; None: not the plugin's
    shown: bool = True  # listed by --help (False: the grader's own plumbing)
    combinable: bool = field(default=False)  # a one-letter flag that may be joined: -xs, -vv


# The plugin's options, in the order --help lists them.
PLUGIN = [
    Option(
        ("--impl",), "file to grade: katas (default), solutions, a folder or a .py file",
        takes="value", metavar="PATH", plugin={"default": None},
    ),
    Option(
        ("--device",), "device for the checks: cpu (default), cuda, mps",
        takes="value", metavar="DEVICE", plugin={"default": "cpu"},
    ),
    Option(
        ("--hints",), "hints for the headline failure: 1 the idea (default), 2 the formula too",
        takes="optional", metavar="STEP", kind=int,
        plugin={"nargs": "?", "const": 1, "default": 0, "type": int, "metavar": "STEP"},
    ),
    Option(
        ("--all",), "show every failure, not only the first",
        plugin={"action": "store_true", "dest": "expand"},
    ),
    Option(
        ("--perf",), "after grading, time your layer against torch's built-in (never graded)",
        plugin={"action": "store_true"},
    ),
    Option(
        ("--report-json",), "also write the verdict as JSON to this path",
        takes="value", metavar="PATH", plugin={"default": None},
    ),
    # pytest owns --strict: with pytest run directly, the plugin takes --strict-parity instead.
    Option(
        ("--strict-parity",), "solved only when the torch-parity checks pass too",
        plugin={"action": "store_true"}, shown=False,
    ),
    Option(
        ("--checklist",), "print the learner-facing checklist",
        plugin={"action": "store_true"}, shown=False,
    ),
]  # fmt: skip

# What the runner and the practice command line take before pytest sees the arguments.
DOOR = [
    Option(("--strict",), "solved only when the torch-parity checks pass too"),
    Option(("--watch",), "regrade on every save; Enter regrades, q quits"),
    Option(
        ("--tests",),
        "grade your tests of the layer (tests/test_<kata>.py): see docs/testing.md",
    ),
    Option(("-h", "--help"), "list these options and exit"),
]

# pytest's own options that make sense for a grading, passed through to it.
PYTEST = [
    Option(
        ("-k",), "only the checks whose name or checklist line holds EXPR (-k cuda)",
        takes="value", metavar="EXPR",
    ),
    Option(("-m",), "only the checks with this marker: parity", takes="value", metavar="EXPR"),
    Option(("-x", "--exitfirst"), "stop at the first failing check", combinable=True),
    Option(("--maxfail",), "stop after N failing checks", takes="value", metavar="N", kind=int),
    Option(
        ("--timeout",), "CPU seconds per check (default 10)",
        takes="value", metavar="SECONDS", kind=float,
    ),
    Option(
        ("--timeout-method",), "how checks are timed: signal (default on Unix) or thread",
        takes="value", metavar="METHOD", choices=("signal", "thread"),
    ),
    Option(("-s",), "show what your code prints", combinable=True),
    # Accepted, as pytest takes them, but the checklist reads the same with or without them.
    Option(("-v", "--verbose"), "more detail", combinable=True, shown=False),
    Option(("-q", "--quiet"), "less detail", combinable=True, shown=False),
]  # fmt: skip

ALL = [*PLUGIN, *DOOR, *PYTEST]
BY_FLAG = {flag: option for option in ALL for flag in option.flags}
HELP = ("-h", "--help")
# What a notebook's cell cannot be given, and why (the cell is the file; running it grades it).
NOT_IN_A_CELL = {"--impl": "the cell is the file graded", "--watch": "running the cell grades it"}
# A negative number after an option that takes one is its value, not an option: --timeout -1.
_NUMBER = re.compile(r"-\d+(\.\d*)?(e-?\d+)?|-\.\d+")


def add_to_pytest(group: Any) -> None:
    """Add the plugin's options to pytest's parser group (the plugin's pytest_addoption)."""
    for option in PLUGIN:
        assert option.plugin is not None
        group.addoption(*option.flags, help=option.help, **option.plugin)


def wants_help(args: list[str]) -> bool:
    return any(a in HELP for a in args)


def help_text(prog: str, where: str = "terminal") -> str:
    """What `--help` prints: every option a learner can give a grading through the door
    `where` (engine.suggest: in a notebook the cell is the file, and running it grades it)."""
    from norm_katas.engine import suggest

    def rows(options: list[Option]) -> list[str]:
        lines = []
        for option in options:
            if not option.shown or (
                where == suggest.NOTEBOOK and option.flags[-1] in NOT_IN_A_CELL
            ):
                continue
            value = {"value": f" {option.metavar}", "optional": f" [{option.metavar}]"}
            name = ", ".join(option.flags) + value.get(option.takes, "")
            said = option.help
            if option.flags == ("--impl",):
                said = said.replace("katas (default)", suggest.default_impl())
            lines.append(f"  {name:24} {said}")
        return lines

    return "\n".join(
        [
            f"usage: {prog} [options]",
            "",
            "Grades your file and prints the checklist. Exit status: 0 solved, 1 not solved yet,",
            "2 a usage error, 3 the grader itself failed, 130 stopped with Ctrl-C.",
            "",
            "grading options:",
            *rows(PLUGIN + DOOR),
            "",
            "pytest options passed through:",
            *rows(PYTEST),
        ]
    )


def _suggest(word: str) -> str:
    close = difflib.get_close_matches(word, list(BY_FLAG), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


class OptionError(ValueError):
    """Grading options that are wrong; str() says what is wrong, for a learner."""


def problem(args: list[str], prog: str = "") -> str | None:
    """What is wrong with `args` as grading options (None: nothing), said for a learner."""
    try:
        scan(args, prog)
    except OptionError as e:
        return str(e)
    return None


def scan(args: list[str], prog: str = "") -> list[tuple[Option, str | None]]:
    """The options in `args`, each with its value (None: a flag, or an optional value left
    out), in order; OptionError when one is wrong. `prog`: the command that lists them."""
    see = f"\nThe options: {prog} --help" if prog else ""
    found: list[tuple[Option, str | None]] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-") or arg == "-":
            raise OptionError(f"unexpected argument {arg!r}: options start with -{see}")
        name, eq, attached = arg.partition("=")
        if not eq and len(arg) > 2 and not arg.startswith("--"):
            name, attached = arg[:2], arg[2:]  # -kEXPR, or joined flags: -xs, -vv
            option = BY_FLAG.get(name)
            if option is not None and option.combinable:
                joined = [BY_FLAG.get(f"-{c}", Option((), "")) for c in attached]
                if all(o.combinable for o in joined):
                    found += [(option, None)] + [(o, None) for o in joined]
                    continue
                raise OptionError(f"unknown option {arg!r}{_suggest(arg)}{see}")
            eq = "=" if option is not None and option.takes else ""
        option = BY_FLAG.get(name)
        if option is None:
            raise OptionError(f"unknown option {name!r}{_suggest(name)}{see}")
        if not option.takes:
            if eq:
                raise OptionError(f"{name} takes no value (given {arg!r}){see}")
            found.append((option, None))
            continue
        if eq:
            value: str | None = attached
        elif i < len(args) and (
            not (args[i].startswith("-") and args[i] != "-")
            or (option.kind is not str and _NUMBER.fullmatch(args[i]))  # --timeout -1
        ):
            value, i = args[i], i + 1
        else:
            value = None
        if value is None or value == "":
            if option.takes == "optional":
                found.append((option, None))
                continue
            raise OptionError(f"{name} needs a value: {name} {option.metavar}, {option.help}{see}")
        if option.choices and value not in option.choices:
            raise OptionError(f"{name} {value}: expected one of {', '.join(option.choices)}{see}")
        if option.kind is not str:
            try:
                number = option.kind(value)
            except ValueError:
                what = "a whole number" if option.kind is int else "a number"
                usage = f"{name} {option.metavar}, {option.help}"
                raise OptionError(f"{name} {value}: expected {what}: {usage}{see}") from None
            if name == "--hints" and number not in (1, 2):
                raise OptionError(
                    f"--hints {value}: expected 1 (the idea) or 2 (the formula too){see}"
                )
            if name == "--timeout" and not 0 < number < math.inf:
                # pytest-timeout takes 0 for no limit; a check here always has one.
                raise OptionError(
                    f"--timeout {value}: expected a positive number of CPU seconds per check "
                    f"(default 10); every check has a limit, so that code that loops forever "
                    f"is stopped{see}"
                )
        found.append((option, value))
    return found
