"""%kata_mock: a timed mock interview in a notebook, as `nox -s mock` runs one in a terminal
(norm_katas.practice.mock, which keeps its clock, its gradings and its record).

A mock interview lives in the kernel's memory (a restart loses it): while it runs, each run of
its kata's cell is one of its gradings, recorded as the terminal's mock records them. There is
no timer in a kernel, so time-up is seen when the learner next runs something: a cell run after
it (or a grading that ends after it) is the final grading.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import html
import shlex
import time
from typing import TYPE_CHECKING, Any

from norm_katas.content import pristine
from norm_katas.doors import cells, render
from norm_katas.engine import suggest

if TYPE_CHECKING:
    from norm_katas.practice.mock import Mock

_MOCK: Mock | None = None  # the mock interview running in this kernel: one at a time
# The learner's cell that %kata_mock hands out, after its %%kata line: the kata's stub as the
# mock hands it out (without its pitfalls), as that mock's file was written.
_HANDED_OUT: str = ""


def current() -> Mock | None:
    """The mock interview running in this kernel, if one is: only its cell is graded."""
    return _MOCK


def mock_parser() -> argparse.ArgumentParser:
    """%kata_mock's options: the terminal mock's (nox -s mock), and --stop."""
    from norm_katas.practice import mock

    parser = cells.Parser(prog="%kata_mock", description="A timed mock interview in this notebook.")
    mock.add_arguments(parser)
    parser.add_argument(
        "--stop", action="store_true", help="end the mock now: its scorecard, then the debrief"
    )
    return parser


def mock_magic(ipython: Any, line: str) -> None:
    global _MOCK, _HANDED_OUT
    from norm_katas.practice import mock, workspace
    from norm_katas.practice.progress import clock

    try:
        args = mock_parser().parse_args(shlex.split(line))
    except ValueError as e:  # shlex: an unclosed quote
        cells.show_error(f"%kata_mock {line}: {e}")
        return
    except cells.Said as said:
        (cells.show_error if said.error else cells.show_text)(str(said))
        return
    if args.stop:
        if args.kata or args.minutes is not None or args.seed is not None:
            cells.show_error(
                "%kata_mock --stop takes no other option: it ends the mock that is running."
            )
        elif _MOCK is None:
            cells.show_error(
                "No mock interview is running, so there is none to stop. %kata_mock starts one "
                "(--kata NAME picks the kata, --minutes M the budget)."
            )
        else:
            _end_mock("time is up" if _MOCK.elapsed >= _MOCK.budget else "you stopped")
        return
    if _MOCK is not None:
        cells.show_error(
            f"A mock interview of {_MOCK.kata.name} is running ({_time_left(_MOCK)}): grade "
            f"its cell (%%kata {_MOCK.kata.name}), or end it with %kata_mock --stop, before "
            "starting another."
        )
        return
    try:
        kata, budget = mock.pick(args.kata, args.minutes, args.seed)
    except KeyError as e:  # no kata of that name: the message names the closest
        cells.show_error(str(e.args[0]))
        return
    except mock.schedule.Unavailable as e:  # no --kata, and no fsrs to pick one with
        cells.show_error(f"{e} Or name the kata: %kata_mock --kata layernorm.")
        return
    from norm_katas.engine import runner

    # As the terminal's warm-up does: a kata this Python cannot grade is said before the clock.
    if reason := runner.missing_requirements(kata, suggest.NOTEBOOK):
        cells.show_error(reason)
        return
    try:
        path = workspace.scratch_copy(kata, pristine.GRADED_IN_A_NOTEBOOK_MOCK)
    except workspace.WorkspaceError as e:
        cells.show_error(str(e))
        return
    handed_out = path.read_text(encoding="utf-8")
    running = mock.Mock(kata, path, budget)
    running.request = dataclasses.replace(running.request, door=suggest.NOTEBOOK)
    _MOCK, _HANDED_OUT = running, handed_out
    ends = time.strftime("%H:%M %Z", time.localtime(time.time() + budget))
    where = "the cell you paste below" if cells.in_colab() else "the new cell below"
    doc = ast.get_docstring(ast.parse(handed_out)) or ""
    cells.show_markdown(
        f"# Mock interview: {kata.title}\n\n"
        f"**{kata.difficulty}, {clock(budget)} on the clock. The clock starts now: time is "
        f"up at {ends} (the kernel's clock).**\n\n"
        f"Your task is in {where}, beginning `%%kata {kata.name}`; its docstring states the "
        "task and the contract. Run the cell to grade it: each run is one grading, shown "
        "with the time left. No hints or options during the mock: the pitfalls and the "
        "follow-up questions come after it. Solved when the interview core passes. A cell "
        "run after time is up is the final grading; `%kata_mock --stop` ends the mock "
        "sooner.\n\n---\n\n" + doc.replace("\r\n", "\n") + "\n"
    )
    cells.new_cell(ipython, f"%%kata {kata.name}\n{handed_out}")


def only_the_mock(running: Mock) -> str:
    """Why no other cell is graded, and no stub handed out, while the mock runs."""
    name = running.kata.name
    return (
        f"A mock interview of {name} is running ({_time_left(running)}): until it ends, only "
        f"its cell (%%kata {name}) is graded and %kata hands out no stub, as in an interview "
        f"(the stub's pitfalls come after it). %kata_mock --stop ends the mock."
    )


def _time_left(running: Mock) -> str:
    from norm_katas.practice.progress import clock

    left = running.budget - running.elapsed
    if left <= 0:
        return "time is up: its next grading is the final one"
    return f"{clock(left)} of {clock(running.budget)} left"


def grade(ipython: Any, running: Mock, args: list[str], cell: str) -> None:
    """One grading of the mock: as the terminal mock grades a save, recorded the same way."""
    name = running.kata.name
    if args:  # the terminal's mock offers no options either: none can be passed there
        cells.show_error(
            f"No options during a mock interview: {' '.join(args)} is not graded, as an "
            f"interviewer gives no hints. Make the cell's first line %%kata {name} and run it "
            "again (%kata_mock --stop ends the mock; after it, options work as ever)."
        )
        return
    elapsed = running.elapsed
    running.path.write_text(cells.as_file(running.kata, cell, _HANDED_OUT), encoding="utf-8")
    graded = cells.grade_and_run(ipython, running.request, cell, "mock", **running.record(elapsed))
    if graded is None:  # interrupted: no grading, and the mock goes on
        return
    outcome, said = graded
    ended = running.count(outcome, elapsed)
    verdict = render.verdict(running.request, outcome.code, outcome.report, said)
    text = render.in_cell(said, running.path)
    if running.elapsed >= running.budget:  # no timer runs in a kernel: time-up is seen now
        head = "Time is up: that was the final grading."
        _end_mock("time is up", f'<p class="nk-bad"><b>{head}</b></p>' + verdict, f"{head}\n{text}")
    elif ended is not None:
        _end_mock(ended, verdict, text)
    else:
        gradings = f"{running.gradings} grading{'s' * (running.gradings != 1)}"
        more = "Run the cell again to grade it; %kata_mock --stop ends the mock."
        cells.show(
            verdict + f'<p class="nk-mock-clock"><b>⏱ {html.escape(_time_left(running))}</b>'
            f" · {gradings}. {more}</p>",
            f"{text.rstrip()}\n\n⏱ {_time_left(running)} · {gradings}. {more}",
        )


def _end_mock(ended: str, before: str = "", before_text: str = "") -> None:
    """The mock is over: the scorecard, then the debrief (pitfalls, follow-up questions)."""
    global _MOCK
    running, _MOCK = _MOCK, None
    if running is not None:
        cells.show(
            before + render.scorecard(running, ended) + render.debrief(running.kata),
            "\n\n".join(
                part.strip("\n")
                for part in (
                    before_text,
                    render.scorecard_text(running, ended),
                    render.debrief_text(running.kata),
                )
                if part.strip()
            ),
        )
