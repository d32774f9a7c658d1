"""A notebook cell, for the magics and norm_katas.check: written to a file and graded in a child
process, and what a cell shows (HTML, with its text for a console).

A graded cell is written to a file of its own (in the history's folder: notebook/<kata>/) and
graded as `--impl` grades a file: by the same runner and suites, in a child process, so that
os._exit, an endless loop or a segfault in the learner's code costs that child, never the
kernel. Only when the grading ran to the end does the cell also run in the notebook, so that
its class is there to try out.

IPython is imported here only, when a cell shows something: norm_katas never depends on it.
Everything a cell shows goes through `show`, looked up here (cells.show) at each call, never
imported by name: a test that replaces it sees all of it.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import io
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from norm_katas.content import pristine, registry
from norm_katas.engine import options
from norm_katas.engine.request import Request

if TYPE_CHECKING:
    from norm_katas.engine.runner import Graded

MODE = "notebook"  # the history's mode for a cell's gradings
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # a terminal's colour escape sequence
# Options of the grade command that make no sense for a cell: the cell is the file, and it is
# graded when it runs.
NOT_HERE = options.NOT_IN_A_CELL


# -- a cell written to a file and graded --------------------------------------------------


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


def tests_as_file(kata: registry.Kata, cell: str) -> str:
    """The file a %%kata NAME --tests cell is graded as: the test stub exactly, when the cell
    holds it untouched (a front end may drop or add its last newline)."""
    text = cell.replace("\r\n", "\n")
    with contextlib.suppress(pristine.StubError):
        stub = pristine.tests_text(kata).replace("\r\n", "\n")
        if text.strip("\n") == stub.strip("\n"):
            return stub
    return text if text.endswith("\n") else text + "\n"


def grade_and_run(
    ipython: Any, request: Request, cell: str, mode: str, **mock: object
) -> tuple[Graded, str] | None:
    """Grade the request's file (the cell, written there), recorded with `mode` (and a mock's
    `seconds`, `budget`, `mock_id`); returns the outcome and what the grading wrote, or None
    when the kernel was interrupted."""
    try:
        outcome, said = grade_logged(request, mode, **mock)
    except KeyboardInterrupt:  # the kernel interrupted: the child went with it
        show_error("Grading interrupted: nothing was recorded. Run the cell again to grade it.")
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
    # pytest, a second or more each time) is imported here once, before the first.
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


# -- what a cell shows, and the cell a magic hands out ------------------------------------


class Said(Exception):
    """What argparse would print before exiting: shown in the cell instead (error: in red)."""

    def __init__(self, text: str, error: bool) -> None:
        super().__init__(text)
        self.error = error


class Parser(argparse.ArgumentParser):
    """argparse that shows its errors and --help in the cell: a kernel must not exit."""

    def error(self, message: str) -> NoReturn:
        raise Said(f"{self.format_usage()}{self.prog}: error: {message}", error=True)

    def print_help(self, file: Any = None) -> None:
        raise Said(self.format_help(), error=False)


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


def show(markup: str, text: str) -> None:
    """HTML for Jupyter and Colab, and its text for a console, a plain-text front end and a
    notebook converted to text (the terminal report's text, for a verdict)."""
    from IPython.display import display

    display({"text/html": markup, "text/plain": text.rstrip("\n")}, raw=True)


def show_markdown(text: str) -> None:
    from IPython.display import display

    display({"text/markdown": text, "text/plain": text.rstrip("\n")}, raw=True)


def show_text(text: str) -> None:
    show(f"<pre>{html.escape(text)}</pre>", text)


def show_error(text: str) -> None:
    show(f'<pre class="nk-bad" style="color:#cf222e">{html.escape(text)}</pre>', text)
