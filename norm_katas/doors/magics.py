"""Practise in Jupyter or Colab: the %kata magics (`%load_ext norm_katas` loads them).

    %kata layernorm            a new cell with the kata's stub, its teaching text as Markdown
    %%kata layernorm [options] (a cell's first line) grade the cell; the grade command's options
    %kata_progress [--history] progress: a picture of solve times against the suggested
                               minutes, then what `norm-katas progress` says (its options too)
    %kata_mock [--kata NAME] [--minutes M] [--seed S]
                               a timed mock interview, as `nox -s mock`; --stop ends it

A graded cell is written to a file of its own (in the history's folder: notebook/<kata>/) and
graded as `--impl` grades a file: by the same runner and suites, in a child process, so that
os._exit, an endless loop or a segfault in the learner's code costs that child, never the
kernel. Only when the grading ran to the end does the cell also run in the notebook, so that
its class is there to try out. The verdict is HTML, with the terminal report as its text/plain
(consoles, nbconvert), recorded in the history as mode "notebook".

A mock interview lives in the kernel's memory (a restart loses it): while it runs, each run of
its kata's cell is one of its gradings, recorded as the terminal's mock records them. There is
no timer in a kernel, so time-up is seen when the learner next runs something: a cell run after
it (or a grading that ends after it) is the final grading.

IPython is imported here only: norm_katas never depends on it.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import html
import io
import os
import re
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from norm_katas.content import pristine, registry
from norm_katas.engine import options, suggest
from norm_katas.engine.request import GRADER_FAILED, USAGE, Request, UsageError

if TYPE_CHECKING:
    from norm_katas.engine.runner import Graded
    from norm_katas.practice.mock import Mock

MODE = "notebook"  # the history's mode for a cell's gradings
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # a terminal's colour escape sequence
# Options of the grade command that make no sense for a cell: the cell is the file, and it is
# graded when it runs.
NOT_HERE = options.NOT_IN_A_CELL


def load(ipython: Any) -> None:
    """Register the magics with this IPython (what `%load_ext norm_katas` does)."""
    ipython.register_magic_function(
        lambda line, cell=None: kata_magic(ipython, line, cell), "line_cell", "kata"
    )
    ipython.register_magic_function(progress_magic, "line", "kata_progress")
    ipython.register_magic_function(lambda line: mock_magic(ipython, line), "line", "kata_mock")


def kata_magic(ipython: Any, line: str, cell: str | None) -> None:
    try:
        args = shlex.split(line)
    except ValueError as e:
        _error(f"%kata {line}: {e}")
        return
    if not args:
        names = ", ".join(k.name for k in registry.load())
        if cell is None:
            _error(f"Name a kata: %kata NAME puts its stub in a new cell. The katas: {names}.")
        else:  # the cell's code is there, but not which kata grades it
            _error(
                "%%kata needs the kata to grade this cell with, on its first line: "
                f"%%kata NAME, e.g. %%kata layernorm. The katas: {names}."
            )
        return
    try:
        kata = registry.get(args[0])
    except KeyError as e:
        _error(str(e.args[0]))
        return
    if _MOCK is not None:  # a mock interview is running: only its own cell is graded
        if cell is not None and kata.name == _MOCK.kata.name:
            _grade_mock(ipython, _MOCK, args[1:], cell)
        else:
            _error(_only_the_mock(_MOCK))
    elif cell is None:
        _start(ipython, kata, args[1:])
    else:
        _grade(ipython, kata, args[1:], cell)


def progress_magic(line: str = "") -> None:
    """%kata_progress [--history [KATA]] [--limit N]: the options of the progress command."""
    from norm_katas.practice import chart, progress

    try:
        parser = progress.parser("%kata_progress", _Parser)
        text = progress.answer(parser, shlex.split(line), suggest.NOTEBOOK)
    except _Said as said:
        return (_error if said.error else _pre)(str(said))
    except (KeyError, ValueError) as e:  # an unknown kata; shlex's unclosed quote
        return _error(str(e.args[0]))
    if text is not None:
        return _pre(text)
    # The picture (solve times against the suggested minutes), then the text: its weak spots
    # and what to practise next.
    report = progress.report(suggest.NOTEBOOK)
    _show(f"{chart.render(progress.collect())}<pre>{html.escape(report)}</pre>", report)


# -- %kata NAME: the stub, to start from --------------------------------------------------


def in_colab() -> bool:
    """Colab's front end ignores set_next_input: there the stub is printed to paste."""
    return "google.colab" in sys.modules


def new_cell(ipython: Any, text: str) -> None:
    """A new cell holding `text` below this one, or, in Colab, `text` printed to paste."""
    if in_colab():
        print("Copy this into a new cell, then run it to grade it:\n")
        print(text)
    else:
        ipython.set_next_input(text, replace=False)


def cell_text(kata: registry.Kata) -> str:
    """The cell %kata makes: the magic that grades it, then the stub as a cell holds it (its
    teaching text is shown as Markdown above it)."""
    return f"%%kata {kata.name}\n{pristine.for_notebook(pristine.text(kata), kata.name)}"


def teaching(kata: registry.Kata, standalone: bool = True) -> str:
    """The stub's docstring as Markdown (its sections are setext headings already). Standalone
    (what %kata shows): under the kata's title, saying how a cell is graded instead of the
    command line's command. In a notebook of notebooks/, whose own cells say both: without
    them, and without the docstring's first line, which the title says."""
    doc = (ast.get_docstring(ast.parse(pristine.text(kata))) or "").replace("\r\n", "\n") + "\n"
    if not standalone:
        return pristine.GRADE_YOURSELF.sub("", doc.split("\n", 1)[-1], count=1).strip() + "\n"
    doc = pristine.GRADE_YOURSELF.sub(
        f"Run the cell below to grade it: its first line, `%%kata {kata.name}`, grades it; "
        f"add `--hints` for a hint, `--all` for every failure, `--strict` to require torch "
        "parity.\n",
        doc,
        count=1,
    )
    return f"# {kata.title}\n\n{doc}"


def _start(ipython: Any, kata: registry.Kata, extra: list[str]) -> None:
    if extra:
        _error(
            f"%kata {kata.name} takes no options: %%kata {kata.name}, a cell's first line, does."
        )
        return
    try:
        text = cell_text(kata)
    except pristine.StubError as e:
        _error(str(e))
        return
    _markdown(teaching(kata))
    new_cell(ipython, text)


# -- %%kata NAME: grade the cell ------------------------------------------------------------


def folder(kata: registry.Kata) -> Path:
    """Where a cell of this kata is written to be graded."""
    from norm_katas.practice import history

    return history.data_dir() / "notebook" / kata.stem


def as_file(kata: registry.Kata, cell: str, handed_out: str | None = None) -> str:
    """The file a cell is graded as. A front end may drop or add the last newline of a cell, so
    a stub as handed out (by %kata, by a mock: `handed_out`, or the whole file pasted) is
    written exactly as handed out: it is not started."""
    text = cell.replace("\r\n", "\n")
    with contextlib.suppress(pristine.StubError):
        stub = pristine.text(kata).replace("\r\n", "\n")
        forms = (pristine.for_notebook(stub, kata.name), stub)
        for form in forms if handed_out is None else (handed_out.replace("\r\n", "\n"),):
            if text.strip("\n") == form.strip("\n"):
                return form
    return text if text.endswith("\n") else text + "\n"


def _grade(ipython: Any, kata: registry.Kata, args: list[str], cell: str) -> None:
    prog = f"%%kata {kata.name}"
    for arg in args:
        if (name := arg.split("=")[0]) in NOT_HERE:
            _error(f"{prog}: {name} does not apply in a notebook ({NOT_HERE[name]}).")
            return
    where = folder(kata)
    where.mkdir(parents=True, exist_ok=True)
    path = where / kata.file
    path.write_text(as_file(kata, cell), encoding="utf-8")
    if options.wants_help(args):
        _pre(options.help_text(prog, suggest.NOTEBOOK))
        return
    try:
        request = Request.parse(kata, [*args, "--impl", str(path)], prog=prog, base=where)
        request = dataclasses.replace(request, door=suggest.NOTEBOOK)
    except UsageError as e:
        _error(str(e))
        return
    if (graded := _run(ipython, request, cell, MODE)) is not None:
        outcome, said = graded
        _show(render(request, outcome.code, outcome.report, said), in_cell(said, path))


def _run(
    ipython: Any, request: Request, cell: str, mode: str, **mock: object
) -> tuple[Graded, str] | None:
    """Grade the request's file (the cell, written there), recorded with `mode` (and a mock's
    `seconds`, `budget`, `mock_id`); returns the outcome and what the grading wrote, or None
    when the kernel was interrupted."""
    try:
        outcome, said = grade_logged(request, mode, **mock)
    except KeyboardInterrupt:  # the kernel interrupted: the child went with it
        _error("Grading interrupted: nothing was recorded. Run the cell again to grade it.")
        return None
    report = outcome.report
    # Run the cell here too, so that its class is there to try; not when its grading died or
    # could not load it: what killed or stopped the grader would stop the kernel.
    if report is not None and report.finished and not report.load_error:
        ipython.run_cell(cell, store_history=False)
    return outcome, said


def grade_logged(request: Request, mode: str, **mock: object) -> tuple[Graded, str]:
    """Grade and record the request's file; returns the outcome and what the grading wrote
    (the terminal's report), kept beside the file in grading.log."""
    from norm_katas.engine import runner
    from norm_katas.practice import grading

    # A kernel grades cell after cell: what each grading's child imported afresh (torch,
    # torch._dynamo, pytest, seconds each time) is imported here once, before the first.
    runner.preload(request.kata)
    log = request.file.parent / "grading.log"
    with open(log, "w+", encoding="utf-8") as out, _streams(out):
        outcome = grading.grade(request, mode=mode, out=out, **mock)
        out.flush()
        out.seek(0)
        # Colour codes (pytest colours its own errors where the kernel's environment asks for
        # colour) would show as stray characters in the cell's HTML and text.
        return outcome, _COLOUR.sub("", out.read())


@contextlib.contextmanager
def _streams(out: TextIO) -> Iterator[None]:
    """sys.stdout and sys.stderr to `out`'s file while grading: a forked child inherits them,
    and the kernel's own streams (which send through its threads) do not work in a child."""
    fd = os.dup(out.fileno())
    stream = io.TextIOWrapper(os.fdopen(fd, "wb"), encoding="utf-8", line_buffering=True)
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = stream
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        stream.close()


# -- %kata_mock: a timed mock interview ----------------------------------------------------

_MOCK: Mock | None = None  # the mock interview running in this kernel: one at a time
# The learner's cell that %kata_mock hands out, after its %%kata line: the kata's stub as the
# mock hands it out (without its pitfalls), as that mock's file was written.
_HANDED_OUT: str = ""


class _Said(Exception):
    """What argparse would print before exiting: shown in the cell instead (error: in red)."""

    def __init__(self, text: str, error: bool) -> None:
        super().__init__(text)
        self.error = error


class _Parser(argparse.ArgumentParser):
    """argparse that shows its errors and --help in the cell: a kernel must not exit."""

    def error(self, message: str) -> NoReturn:
        raise _Said(f"{self.format_usage()}{self.prog}: error: {message}", error=True)

    def print_help(self, file: Any = None) -> None:
        raise _Said(self.format_help(), error=False)


def mock_parser() -> argparse.ArgumentParser:
    """%kata_mock's options: the terminal mock's (nox -s mock), and --stop."""
    from norm_katas.practice import mock

    parser = _Parser(prog="%kata_mock", description="A timed mock interview in this notebook.")
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
        _error(f"%kata_mock {line}: {e}")
        return
    except _Said as said:
        (_error if said.error else _pre)(str(said))
        return
    if args.stop:
        if args.kata or args.minutes is not None or args.seed is not None:
            _error("%kata_mock --stop takes no other option: it ends the mock that is running.")
        elif _MOCK is None:
            _error(
                "No mock interview is running, so there is none to stop. %kata_mock starts one "
                "(--kata NAME picks the kata, --minutes M the budget)."
            )
        else:
            _end_mock("time is up" if _MOCK.elapsed >= _MOCK.budget else "you stopped")
        return
    if _MOCK is not None:
        _error(
            f"A mock interview of {_MOCK.kata.name} is running ({_time_left(_MOCK)}): grade "
            f"its cell (%%kata {_MOCK.kata.name}), or end it with %kata_mock --stop, before "
            "starting another."
        )
        return
    try:
        kata, budget = mock.pick(args.kata, args.minutes, args.seed)
    except KeyError as e:  # no kata of that name: the message names the closest
        _error(str(e.args[0]))
        return
    from norm_katas.engine import runner

    # As the terminal's warm-up does: a kata this Python cannot grade is said before the clock.
    if reason := runner.missing_requirements(kata, suggest.NOTEBOOK):
        _error(reason)
        return
    try:
        path = workspace.scratch_copy(kata, pristine.GRADED_IN_A_NOTEBOOK_MOCK)
    except workspace.WorkspaceError as e:
        _error(str(e))
        return
    handed_out = path.read_text(encoding="utf-8")
    running = mock.Mock(kata, path, budget)
    running.request = dataclasses.replace(running.request, door=suggest.NOTEBOOK)
    _MOCK, _HANDED_OUT = running, handed_out
    ends = time.strftime("%H:%M %Z", time.localtime(time.time() + budget))
    where = "the cell you paste below" if in_colab() else "the new cell below"
    doc = ast.get_docstring(ast.parse(handed_out)) or ""
    _markdown(
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
    new_cell(ipython, f"%%kata {kata.name}\n{handed_out}")


def _only_the_mock(running: Mock) -> str:
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


def _grade_mock(ipython: Any, running: Mock, args: list[str], cell: str) -> None:
    """One grading of the mock: as the terminal mock grades a save, recorded the same way."""
    name = running.kata.name
    if args:  # the terminal's mock offers no options either: none can be passed there
        _error(
            f"No options during a mock interview: {' '.join(args)} is not graded, as an "
            f"interviewer gives no hints. Make the cell's first line %%kata {name} and run it "
            "again (%kata_mock --stop ends the mock; after it, options work as ever)."
        )
        return
    elapsed = running.elapsed
    running.path.write_text(as_file(running.kata, cell, _HANDED_OUT), encoding="utf-8")
    graded = _run(ipython, running.request, cell, "mock", **running.record(elapsed))
    if graded is None:  # interrupted: no grading, and the mock goes on
        return
    outcome, said = graded
    ended = running.count(outcome, elapsed)
    verdict = render(running.request, outcome.code, outcome.report, said)
    text = in_cell(said, running.path)
    if running.elapsed >= running.budget:  # no timer runs in a kernel: time-up is seen now
        head = "Time is up: that was the final grading."
        _end_mock("time is up", f'<p class="nk-bad"><b>{head}</b></p>' + verdict, f"{head}\n{text}")
    elif ended is not None:
        _end_mock(ended, verdict, text)
    else:
        gradings = f"{running.gradings} grading{'s' * (running.gradings != 1)}"
        more = "Run the cell again to grade it; %kata_mock --stop ends the mock."
        _show(
            verdict + f'<p class="nk-mock-clock"><b>⏱ {html.escape(_time_left(running))}</b>'
            f" · {gradings}. {more}</p>",
            f"{text.rstrip()}\n\n⏱ {_time_left(running)} · {gradings}. {more}",
        )


def _end_mock(ended: str, before: str = "", before_text: str = "") -> None:
    """The mock is over: the scorecard, then the debrief (pitfalls, follow-up questions)."""
    global _MOCK
    running, _MOCK = _MOCK, None
    if running is not None:
        _show(
            before + scorecard(running, ended) + debrief(running.kata),
            "\n\n".join(
                part.strip("\n")
                for part in (
                    before_text,
                    scorecard_text(running, ended),
                    debrief_text(running.kata),
                )
                if part.strip()
            ),
        )


def scorecard(running: Mock, ended: str) -> str:
    """The terminal mock's scorecard as HTML, and what a cell of the kata does after it."""
    from norm_katas.practice import mock

    esc = html.escape
    name = running.kata.name
    solved = running.solved_at is not None
    rows = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{esc(label)}</th>"
        f"<td style='text-align:left'>{esc(value)}</td></tr>"
        for label, value in mock.scorecard_rows(running, ended)
    )
    after = prose(_after(running))
    return (
        f'{STYLE}<div class="nk-scorecard" data-kata="{esc(name)}" data-ended="{esc(ended)}" '
        f'data-solved="{int(solved)}"><h3>Scorecard: {esc(running.kata.title)}</h3>'
        f"<table>{rows}</table><p>{after}</p></div>"
    )


def _after(running: Mock) -> str:
    """What a cell of the kata does after the mock (with `code` spans, see prose)."""
    from norm_katas.engine.report import PARITY

    after = f"The mock is over: a plain `%%kata {running.kata.name}` cell grades as practice"
    if running.solved_at is not None and running.parity_at is None and running.last is not None:
        passed, total = running.last.tally(PARITY)
        after = (
            f"Torch parity, the stretch goal, is at {passed}/{total}. {after}, where "
            "`--strict` requires parity too."
        )
    elif running.solved_at is None:
        after += ", where `--hints` gives a hint."
    else:
        after += "."
    if running.in_history():
        return after + " This mock is in your history: `%kata_progress`."
    return after + " This mock left nothing in your history: no attempt of yours was recorded."


def scorecard_text(running: Mock, ended: str) -> str:
    """The scorecard as plain text: what a console or a notebook converted to text shows."""
    from norm_katas.practice import mock

    rows = mock.scorecard_rows(running, ended)
    lines = [f"Scorecard: {running.kata.title}", *(f"  {label:10} {v}" for label, v in rows)]
    return "\n".join([*lines, "", _after(running)])


def debrief(kata: registry.Kata) -> str:
    """The pitfalls the mock's stub hid, then each follow-up question with its model answer
    folded: answer aloud, then expand."""
    from norm_katas.practice import mock

    esc = html.escape
    parts = ['<div class="nk-debrief">']
    if hidden := mock.pitfalls(kata):
        items = "".join(f"<li>{prose(item)}</li>" for item in _bullets(hidden))
        parts.append(f"<h4>Pitfalls interviewers probe on this layer</h4><ul>{items}</ul>")
    if questions := mock.follow_ups(kata):
        parts.append(
            "<h4>Follow-up questions an interviewer would ask</h4><p class='nk-dim'>Answer each "
            "aloud, then expand it for a model answer.</p>"
        )
        for i, (question, answer) in enumerate(questions, 1):
            parts.append(
                f"<details class='nk-followup'><summary><b>Q{i}.</b> {esc(question)}</summary>"
                f"<p style='white-space:pre-wrap'>{esc(answer.strip())}</p></details>"
            )
    return "".join([*parts, "</div>"])


def debrief_text(kata: registry.Kata) -> str:
    """The debrief as plain text, each model answer after its question."""
    from norm_katas.practice import mock

    parts = []
    if hidden := mock.pitfalls(kata):
        parts.append(f"Pitfalls interviewers probe on this layer:\n{plain(hidden.rstrip())}")
    if questions := mock.follow_ups(kata):
        parts.append("Follow-up questions an interviewer would ask (answer aloud, then read on):")
        for i, (question, answer) in enumerate(questions, 1):
            parts.append(f"Q{i}. {question}\n{answer.strip()}")
    return "\n\n".join(parts)


def _bullets(text: str) -> list[str]:
    """The items of a "* item" list whose items run on over indented lines, each one line."""
    items: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith("* ") or not items:
            items.append(line.lstrip().removeprefix("* ").strip())
        elif line.strip():
            items[-1] += " " + line.strip()
    return [item for item in items if item]


# RST's ``code`` (the stubs' docstrings) and Markdown's `code` (what the tool says).
_CODE = re.compile(r"``(.+?)``|`([^`\n]+)`")


def prose(text: str) -> str:
    """Text as HTML: escaped, its ``code`` and `code` spans as <code>."""
    out, at = [], 0
    for span in _CODE.finditer(text):
        out += [
            html.escape(text[at : span.start()]),
            f"<code>{html.escape(span[1] or span[2])}</code>",
        ]
        at = span.end()
    return "".join(out) + html.escape(text[at:])


def plain(text: str) -> str:
    """Text for a plain-text display: RST's ``code`` as Markdown's `code`."""
    return re.sub(r"``(.+?)``", r"`\1`", text)


# -- the verdict as HTML ------------------------------------------------------------------

STYLE = (
    "<style>.nk-verdict summary,.nk-debrief summary{cursor:pointer}"
    ".nk-verdict pre,.nk-debrief pre{white-space:pre-wrap;margin:.3em 0}"
    ".nk-ok{color:#1a7f37}.nk-bad{color:#cf222e}.nk-dim{color:#6e7781}</style>"
)


def render(request: Request, code: int, report: Any, said: str, cell: bool = True) -> str:
    """The verdict: the headline, the score of both tiers, and each tier's checklist, failures
    folded (expand one to see its message, and its hints when asked for). `said`: what the
    grading wrote, shown where it is the verdict (the grader failed, the child died). `cell`:
    a %%kata cell was graded; else norm_katas.check graded code, and its file is named."""
    from norm_katas.engine.report import CORE, PARITY, TIER_TITLES, Outcome

    kata = request.kata
    esc = html.escape
    head = report.headline if report is not None else None
    attrs = f'data-kata="{esc(kata.name)}" data-code="{code}"'
    if head is not None:
        attrs += f' data-headline="{esc(head.function)}"'
    parts = [STYLE, f'<div class="nk-verdict" {attrs}>', f"<h3>{esc(kata.title)}</h3>"]

    def pre(text: str) -> str:
        text = in_cell(text, request.file) if cell else text
        return f"<pre>{esc(text)}</pre>" if text.strip() else ""

    def hints(check: Any) -> str:  # those chosen for its failure, whatever its kind
        steps = zip(("idea", "formula"), check.hints[: request.hints], strict=False)
        return "".join(f'<p class="nk-dim">Hint ({s}): {prose(h)}</p>' for s, h in steps)

    if report is None or code in (GRADER_FAILED, USAGE):
        parts.append(f'<p class="nk-bad"><b>Not graded.</b></p>{pre(said)}')
    elif not report.finished:  # the grading's process died: what it said is all there is
        parts.append(f'<p class="nk-bad"><b>Your code ended the grading.</b></p>{pre(said)}')
    elif report.load_error:
        parts.append(
            f'<p class="nk-bad"><b>Your {"cell" if cell else "code"} could not be loaded</b>, '
            "so no check ran:</p>" + pre(report.load_error)
        )
    elif report.not_started:
        parts.append(
            f"<p><b>Not started yet?</b> This {'cell' if cell else 'code'} is the stub as handed "
            "out: it still raises NotImplementedError. Read its docstring, write the code it "
            f"asks for, then {'run the cell' if cell else 'check it'} again.</p>"
        )
    elif head is not None:
        lead = ""
        if head.tier == PARITY:
            lead = "Interview core solved. " if report.solved else ""
            lead += "--strict requires torch parity too: " if request.strict else "Stretch goal: "
        parts.append(
            f'<p>{esc(lead)}<span class="nk-bad">✗</span> <b>{prose(head.description)}</b></p>'
            + pre(head.message)
            + hints(head)
            + _folded(report, request.file)
        )
        if request.hints < min(2, len(head.hints)) and not request.mock:
            more = "--hints" if not request.hints else "--hints 2"
            again = (
                f"Run the cell again with <code>%%kata {esc(kata.name)} {more}</code> on its "
                "first line"
                if cell
                else f"Check it again with <code>{esc(repr(more))}</code> after the code: "
                f"<code>norm_katas.check({esc(repr(kata.name))}, …, {esc(repr(more))})</code>"
            )
            parts.append(f'<p class="nk-dim">Stuck? {again}.</p>')
    if report is not None and request.device.startswith("cuda") and report.device == "cpu":
        parts.append(
            '<p class="nk-dim">No GPU in this runtime: the checks ran on the CPU, and your '
            "module's device handling on simulated CUDA. For a GPU in Colab: <i>Runtime → Change "
            "runtime type</i>, a GPU, then run the notebook's first cell and this one again.</p>"
        )
    if report is not None and report.finished and report.load_error and report.checks:
        # Every check failed for that one reason: a checklist would say it once per check.
        parts.append(f'<p class="nk-dim">{len(report.checks)} checks wait for it.</p>')
    elif report is not None and report.finished and report.checks:
        parts.append(_score(report, request.strict))
        for tier in (CORE, PARITY):
            if checks := report.tier(tier):
                parts.append(f"<h4>{esc(TIER_TITLES[tier])}</h4><ul style='list-style:none'>")
                for check in checks:
                    parts.append(f"<li>{_check(check, Outcome, pre, hints)}</li>")
                parts.append("</ul>")
        if report.stopped:
            parts.append(f'<p class="nk-bad">Stopped early: {esc(report.stopped)}</p>')
    if said.strip() and report is not None and report.finished and code not in (GRADER_FAILED,):
        parts.append(f"<details><summary class='nk-dim'>The grader's output</summary>{pre(said)}")
        parts.append("</details>")
    parts.append("</div>")
    return "".join(parts)


def in_cell(text: str, file: Path) -> str:
    """A message about the graded file, about the cell instead: its path is "your cell", and its
    line numbers the cell's, whose first line is the %%kata magic, not in the file."""
    path = re.escape(str(file))
    text = re.sub(path + r"(,? line |:)(\d+)", lambda m: f"your cell{m[1]}{int(m[2]) + 1}", text)
    return re.sub(path, "your cell", text)


def _score(report: Any, strict: bool) -> str:
    marks = {
        "ok": '<span class="nk-ok">✓</span>',
        "bad": '<span class="nk-bad">✗</span>',
        "none": '<span class="nk-dim">–</span>',  # every check skipped: nothing was graded
    }
    parts = [f"{html.escape(a)}{marks[m]}{html.escape(b)}" for a, m, b in report.score(strict)]
    extra = f' <span class="nk-dim">({report.skipped} skipped)</span>' if report.skipped else ""
    return f"<p><b>{' · '.join(parts)}</b>{extra}</p>"


def _folded(report: Any, file: Path) -> str:
    """The failures under the headline, grouped as the terminal's verdict groups them
    (Report.fold): those with evidence of its cause in one line, the others by title."""
    esc = html.escape
    fold = report.fold()
    parts = []
    if same := fold.same_text():
        parts.append(f'<p class="nk-dim">{esc(in_cell(same, file))}.</p>')
    if other := fold.other_text():
        titles, more = fold.other_titles()
        items = "".join(f"<li>{esc(title)}</li>" for title in titles)
        if more:
            items += f"<li>and {more} more</li>"
        parts.append(f'<div class="nk-dim">{esc(other)}:<ul>{items}</ul></div>')
    if later := len(fold.later):
        parts.append(
            f'<p class="nk-dim">Torch parity (stretch) has {later} failing check'
            f"{'s' * (later != 1)} too; fix the core first.</p>"
        )
    return "".join(parts)


def _check(check: Any, outcome: Any, pre: Any, hints: Any) -> str:
    esc = html.escape
    printed = f"<p class='nk-dim'>Your code printed:</p>{pre(check.output)}" if check.output else ""
    if check.outcome == outcome.PASSED:
        return f'<span class="nk-ok">✓</span> {prose(check.description)}{printed}'
    if check.outcome == outcome.SKIPPED:
        why = esc(check.message)
        return f'<span class="nk-dim">– {prose(check.description)} (skipped: {why})</span>'
    if check.outcome == outcome.NOT_RUN:
        return f'<span class="nk-dim">· {prose(check.description)} (did not run)</span>'
    return (
        f'<details><summary><span class="nk-bad">✗</span> {prose(check.description)}</summary>'
        f"{pre(check.message)}{hints(check)}{printed}</details>"
    )


def _show(markup: str, text: str) -> None:
    """HTML for Jupyter and Colab, and its text for a console, a plain-text front end and a
    notebook converted to text (the terminal report's text, for a verdict)."""
    from IPython.display import display

    display({"text/html": markup, "text/plain": text.rstrip("\n")}, raw=True)


def _markdown(text: str) -> None:
    from IPython.display import display

    display({"text/markdown": text, "text/plain": text.rstrip("\n")}, raw=True)


def _pre(text: str) -> None:
    _show(f"<pre>{html.escape(text)}</pre>", text)


def _error(text: str) -> None:
    _show(f'<pre class="nk-bad" style="color:#cf222e">{html.escape(text)}</pre>', text)
