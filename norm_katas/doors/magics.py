"""Practise in Jupyter or Colab: the %kata magics (`%load_ext norm_katas` loads them).

    %kata layernorm            a new cell with the kata's stub, its teaching text as Markdown
    %%kata layernorm [options] (a cell's first line) grade the cell; the grade command's options
    %kata_progress [--history] progress: a picture of solve times against the suggested
                               minutes and of what is due in the next two weeks, then what
                               `norm-katas progress` says (its options too)
    %kata_today [--minutes N]  what to practise today, as `norm-katas today` says it
    %kata_mock [--kata NAME] [--minutes M] [--seed S]
                               a timed mock interview, as `nox -s mock`; --stop ends it

A %%kata cell is graded as `--impl` grades a file, in a child process that the learner's code
may kill without harming the kernel (cells). The verdict is HTML (render), with the terminal
report as its text/plain (consoles, nbconvert), recorded in the history as mode "notebook".
%kata_mock's interview lives in the kernel while it runs (notebook_mock).
"""

from __future__ import annotations

import ast
import dataclasses
import html
import shlex
from typing import Any

from norm_katas.content import pristine, registry
from norm_katas.doors import cells, notebook_mock, render
from norm_katas.engine import options, suggest
from norm_katas.engine.request import Request, UsageError


def load(ipython: Any) -> None:
    """Register the magics with this IPython (what `%load_ext norm_katas` does)."""
    ipython.register_magic_function(
        lambda line, cell=None: kata_magic(ipython, line, cell), "line_cell", "kata"
    )
    ipython.register_magic_function(progress_magic, "line", "kata_progress")
    ipython.register_magic_function(today_magic, "line", "kata_today")
    ipython.register_magic_function(
        lambda line: notebook_mock.mock_magic(ipython, line), "line", "kata_mock"
    )


def kata_magic(ipython: Any, line: str, cell: str | None) -> None:
    try:
        args = shlex.split(line)
    except ValueError as e:
        cells.show_error(f"%kata {line}: {e}")
        return
    if not args:
        names = ", ".join(k.name for k in registry.load())
        if cell is None:
            cells.show_error(
                f"Name a kata: %kata NAME puts its stub in a new cell. The katas: {names}."
            )
        else:  # the cell's code is there, but not which kata grades it
            cells.show_error(
                "%%kata needs the kata to grade this cell with, on its first line: "
                f"%%kata NAME, e.g. %%kata layernorm. The katas: {names}."
            )
        return
    try:
        kata = registry.get(args[0])
    except KeyError as e:
        cells.show_error(str(e.args[0]))
        return
    # A mock interview is running: only its own cell is graded.
    if (mock := notebook_mock.current()) is not None:
        if cell is not None and kata.name == mock.kata.name:
            notebook_mock.grade(ipython, mock, args[1:], cell)
        else:
            cells.show_error(notebook_mock.only_the_mock(mock))
    elif cell is None:
        _start(ipython, kata, args[1:])
    else:
        _grade(ipython, kata, args[1:], cell)


def progress_magic(line: str = "") -> None:
    """%kata_progress [--history [KATA]] [--limit N]: the options of the progress command."""
    from norm_katas.practice import chart, progress, schedule

    try:
        parser = progress.parser("%kata_progress", cells.Parser)
        text = progress.answer(parser, shlex.split(line), suggest.NOTEBOOK)
    except cells.Said as said:
        return (cells.show_error if said.error else cells.show_text)(str(said))
    except (KeyError, ValueError) as e:  # an unknown kata; shlex's unclosed quote
        return cells.show_error(str(e.args[0]))
    if text is not None:
        return cells.show_text(text)
    # The picture (solve times against the suggested minutes, what is due when), then the
    # text: its weak spots and what to practise next.
    at = schedule.now()
    report = progress.report(suggest.NOTEBOOK, at)
    try:
        plan: schedule.Plan | None = schedule.plan(at)
    except schedule.Unavailable:  # the report says how to install it
        plan = None
    picture = chart.render(progress.collect(), plan)
    cells.show(f"{picture}<pre>{html.escape(report)}</pre>", report)


def today_magic(line: str = "") -> None:
    """%kata_today [--minutes N] [--all]: the options of the today command."""
    from norm_katas.practice import schedule, today

    try:
        text = today.answer(today.parser("%kata_today", cells.Parser), shlex.split(line),
                            suggest.NOTEBOOK)  # fmt: skip
    except cells.Said as said:
        return (cells.show_error if said.error else cells.show_text)(str(said))
    except (schedule.Unavailable, ValueError) as e:  # no fsrs; shlex's unclosed quote
        return cells.show_error(str(e))
    return cells.show_text(text)


# -- %kata NAME: the stub, to start from --------------------------------------------------


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
    if extra == ["--tests"]:  # the test-writing mode: a cell of the test stub
        try:
            text = f"%%kata {kata.name} --tests\n{pristine.tests_text(kata)}"
        except pristine.StubError as e:
            cells.show_error(str(e))
            return
        cells.new_cell(ipython, text)
        return
    if extra:
        cells.show_error(
            f"%kata {kata.name} takes no options but --tests (a cell of your tests of the layer): "
            f"%%kata {kata.name}, a cell's first line, takes the grading's options."
        )
        return
    try:
        text = cell_text(kata)
    except pristine.StubError as e:
        cells.show_error(str(e))
        return
    cells.show_markdown(teaching(kata))
    cells.new_cell(ipython, text)


# -- %%kata NAME: grade the cell ----------------------------------------------------------


def _grade(ipython: Any, kata: registry.Kata, args: list[str], cell: str) -> None:
    prog = f"%%kata {kata.name}"
    for arg in args:
        if (name := arg.split("=")[0]) in cells.NOT_HERE:
            cells.show_error(
                f"{prog}: {name} does not apply in a notebook ({cells.NOT_HERE[name]})."
            )
            return
    where = cells.folder(kata)
    tests = "--tests" in args
    path = where / (kata.tests_file if tests else kata.file)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        cells.tests_as_file(kata, cell) if tests else cells.as_file(kata, cell), encoding="utf-8"
    )
    if options.wants_help(args):
        cells.show_text(options.help_text(prog, suggest.NOTEBOOK))
        return
    try:
        request = Request.parse(kata, [*args, "--impl", str(path)], prog=prog, base=where)
        request = dataclasses.replace(request, door=suggest.NOTEBOOK)
    except UsageError as e:
        cells.show_error(str(e))
        return
    if request.tests:
        try:
            outcome, said = cells.grade_logged(request, cells.MODE)
        except KeyboardInterrupt:
            cells.show_error("Grading interrupted: nothing was recorded. Run the cell again.")
            return
        cells.show(render.proof(request, outcome.code, said), render.in_cell(said, path))
        return
    if (graded := cells.grade_and_run(ipython, request, cell, cells.MODE)) is not None:
        outcome, said = graded
        cells.show(
            render.verdict(request, outcome.code, outcome.report, said), render.in_cell(said, path)
        )
