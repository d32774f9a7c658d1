"""Practise in Jupyter or Colab: the %kata magics (`%load_ext norm_katas` loads them).

    %kata layernorm            a new cell with the kata's stub, its teaching text as Markdown
    %%kata layernorm [options] (a cell's first line) grade the cell; the grade command's options
    %kata_progress [--history] progress: a picture of solve times against the suggested
                               minutes, then what `norm-katas progress` says (its options too)

A graded cell is written to a file of its own (in the history's folder: notebook/<kata>/) and
graded as `--impl` grades a file: by the same runner and suites, in a child process, so that
os._exit, an endless loop or a segfault in the learner's code costs that child, never the
kernel. Only when the grading ran to the end does the cell also run in the notebook, so that
its class is there to try out. The verdict is HTML, recorded in the history as mode "notebook".

IPython is imported here only: norm_katas never depends on it.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import html
import io
import os
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from norm_katas.grader import door, registry, stubs
from norm_katas.grader.request import GRADER_FAILED, USAGE, Request, UsageError

MODE = "notebook"  # the history's mode for a cell's gradings
# Options of the grade command that make no sense for a cell: the cell is the file, and it is
# graded when it runs.
NOT_HERE = {"--impl": "the cell is the file graded", "--watch": "running the cell grades it"}


def load(ipython: Any) -> None:
    """Register the magics with this IPython (what `%load_ext norm_katas` does)."""
    ipython.register_magic_function(
        lambda line, cell=None: kata_magic(ipython, line, cell), "line_cell", "kata"
    )
    ipython.register_magic_function(progress_magic, "line", "kata_progress")


def kata_magic(ipython: Any, line: str, cell: str | None) -> None:
    try:
        args = shlex.split(line)
    except ValueError as e:
        _error(f"%kata {line}: {e}")
        return
    if not args:
        names = ", ".join(k.name for k in registry.load())
        _error(f"Name a kata: %kata NAME puts its stub in a new cell. The katas: {names}.")
        return
    try:
        kata = registry.get(args[0])
    except KeyError as e:
        _error(str(e.args[0]))
        return
    if cell is None:
        _start(ipython, kata, args[1:])
    else:
        _grade(ipython, kata, args[1:], cell)


def progress_magic(line: str = "") -> None:
    """%kata_progress [--history [KATA]] [--limit N]: the options of the progress command."""
    from norm_katas.cli import progress_parser, progress_text
    from norm_katas.practice import chart, progress

    parser = progress_parser("%kata_progress")
    try:
        with _argparse_says() as said:
            text = progress_text(parser, shlex.split(line), door.NOTEBOOK)
    except _Said:
        return _show_said(said)
    except (KeyError, ValueError) as e:  # an unknown kata; shlex's unclosed quote
        return _error(str(e.args[0]))
    if text is not None:
        return _show(f"<pre>{html.escape(text)}</pre>")
    # The picture (solve times against the suggested minutes), then the text: its weak spots
    # and what to practise next.
    report = html.escape(progress.report(door.NOTEBOOK))
    _show(f"{chart.render(progress.collect())}<pre>{report}</pre>")


class _Said(Exception):
    """argparse has said its piece (--help, or a usage error) and would exit."""


@contextlib.contextmanager
def _argparse_says() -> Iterator[list[str | int]]:
    """argparse's output and exit status kept for the notebook instead of ending the kernel's
    command: yields [text, status] once it has exited (raising _Said)."""
    out = io.StringIO()
    said: list[str | int] = []
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            yield said
    except SystemExit as e:
        said += [out.getvalue(), e.code if isinstance(e.code, int) else 1]
        raise _Said from None


def _show_said(said: list[str | int]) -> None:
    text, status = said
    (_show if status == 0 else _error)(
        f"<pre>{html.escape(str(text))}</pre>" if not status else str(text)
    )


# -- %kata NAME: the stub, to start from --------------------------------------------------


def in_colab() -> bool:
    """Colab's front end ignores set_next_input: there the stub is printed to paste."""
    return "google.colab" in sys.modules


def cell_text(kata: registry.Kata) -> str:
    """The cell %kata makes: the magic that grades it, then the stub as a cell holds it (its
    teaching text is shown as Markdown above it)."""
    return f"%%kata {kata.name}\n{stubs.for_notebook(stubs.text(kata), kata.name)}"


def teaching(kata: registry.Kata, standalone: bool = True) -> str:
    """The stub's docstring as Markdown (its sections are setext headings already). Standalone
    (what %kata shows): under the kata's title, saying how a cell is graded instead of the
    command line's command. In a notebook of notebooks/, whose own cells say both: without
    them, and without the docstring's first line, which the title says."""
    doc = (ast.get_docstring(ast.parse(stubs.text(kata))) or "").replace("\r\n", "\n") + "\n"
    if not standalone:
        return stubs.GRADE_YOURSELF.sub("", doc.split("\n", 1)[-1], count=1).strip() + "\n"
    doc = stubs.GRADE_YOURSELF.sub(
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
    except stubs.StubError as e:
        _error(str(e))
        return
    from IPython.display import Markdown, display

    display(Markdown(teaching(kata)))
    if in_colab():
        print("Copy this into a new cell, then run it to grade it:\n")
        print(text)
    else:
        ipython.set_next_input(text, replace=False)


# -- %%kata NAME: grade the cell ------------------------------------------------------------


def folder(kata: registry.Kata) -> Path:
    """Where a cell of this kata is written to be graded."""
    from norm_katas.practice import history

    return history.data_dir() / "notebook" / kata.stem


def as_file(kata: registry.Kata, cell: str) -> str:
    """The file a cell is graded as. A front end may drop or add the last newline of a cell, so
    a stub as handed out (by %kata, or the whole file pasted) is written exactly as handed out:
    it is not started."""
    text = cell.replace("\r\n", "\n")
    with contextlib.suppress(stubs.StubError):
        stub = stubs.text(kata).replace("\r\n", "\n")
        for handed_out in (stubs.for_notebook(stub, kata.name), stub):
            if text.strip("\n") == handed_out.strip("\n"):
                return handed_out
    return text if text.endswith("\n") else text + "\n"


def _grade(ipython: Any, kata: registry.Kata, args: list[str], cell: str) -> None:
    from norm_katas.practice import grading

    prog = f"%%kata {kata.name}"
    for arg in args:
        if (name := arg.split("=")[0]) in NOT_HERE:
            _error(f"{prog}: {name} does not apply in a notebook ({NOT_HERE[name]}).")
            return
    where = folder(kata)
    where.mkdir(parents=True, exist_ok=True)
    path = where / kata.file
    path.write_text(as_file(kata, cell), encoding="utf-8")
    from norm_katas.grader import options

    if options.wants_help(args):
        _show(f"<pre>{html.escape(options.help_text(prog))}</pre>")
        return
    try:
        request = Request.parse(kata, [*args, "--impl", str(path)], prog=prog, base=where)
        request = dataclasses.replace(request, door=door.NOTEBOOK)
    except UsageError as e:
        _error(str(e))
        return
    log = where / "grading.log"
    with open(log, "w+", encoding="utf-8") as out, _streams(out):
        try:
            outcome = grading.grade(request, mode=MODE, out=out)
        except KeyboardInterrupt:  # the kernel interrupted: the child went with it
            _error("Grading interrupted: nothing was recorded. Run the cell again to grade it.")
            return
        out.flush()
        out.seek(0)
        said = out.read()
    report = outcome.report
    # Run the cell here too, so that its class is there to try; not when its grading died or
    # could not load it: what killed or stopped the grader would stop the kernel.
    if report is not None and report.finished and not report.load_error:
        ipython.run_cell(cell, store_history=False)
    _show(render(request, outcome.code, report, said))


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


# -- the verdict as HTML ------------------------------------------------------------------

STYLE = (
    "<style>.nk-verdict summary{cursor:pointer}.nk-verdict pre{white-space:pre-wrap;margin:.3em 0}"
    ".nk-ok{color:#1a7f37}.nk-bad{color:#cf222e}.nk-dim{color:#6e7781}</style>"
)


def render(request: Request, code: int, report: Any, said: str) -> str:
    """The verdict: the headline, the score of both tiers, and each tier's checklist, failures
    folded (expand one to see its message, and its hints when asked for). `said`: what the
    grading wrote, shown where it is the verdict (the grader failed, the child died)."""
    from norm_katas.grader.report import CORE, FAIL, PARITY, TIER_TITLES, TODO, Outcome, untouched

    kata = request.kata
    esc = html.escape
    head = report.headline if report is not None else None
    attrs = f'data-kata="{esc(kata.name)}" data-code="{code}"'
    if head is not None:
        attrs += f' data-headline="{esc(head.function)}"'
    parts = [STYLE, f'<div class="nk-verdict" {attrs}>', f"<h3>{esc(kata.title)}</h3>"]

    def pre(text: str) -> str:
        return f"<pre>{esc(in_cell(text, request.file))}</pre>" if text.strip() else ""

    def hints(check: Any) -> str:
        if check.kind != FAIL:
            return ""
        steps = zip(("idea", "formula"), check.hints[: request.hints], strict=False)
        return "".join(f'<p class="nk-dim">Hint ({s}): {esc(h)}</p>' for s, h in steps)

    if report is None or code in (GRADER_FAILED, USAGE):
        parts.append(f'<p class="nk-bad"><b>Not graded.</b></p>{pre(said)}')
    elif not report.finished:  # the grading's process died: what it said is all there is
        parts.append(f'<p class="nk-bad"><b>Your code ended the grading.</b></p>{pre(said)}')
    elif report.load_error:
        parts.append(
            '<p class="nk-bad"><b>Your cell could not be loaded</b>, so no check ran:</p>'
            + pre(report.load_error)
        )
    elif (
        (failed := report.ranked_failures())
        and all(c.kind == TODO for c in failed)
        and (untouched(report))
    ):
        parts.append(
            "<p><b>Not started yet?</b> This cell is the stub as handed out: it still raises "
            "NotImplementedError. Read its docstring, write the code it asks for, then run the "
            "cell again.</p>"
        )
    elif head is not None:
        lead = ""
        if head.tier == PARITY:
            lead = "Interview core solved. " if report.solved else ""
            lead += "--strict requires torch parity too: " if request.strict else "Stretch goal: "
        parts.append(
            f'<p>{esc(lead)}<span class="nk-bad">✗</span> <b>{esc(head.description)}</b></p>'
            + pre(head.message)
            + hints(head)
        )
        if request.hints < 2 and head.kind == FAIL and head.hints:
            more = "--hints" if not request.hints else "--hints 2"
            parts.append(
                f'<p class="nk-dim">Stuck? Run the cell again with <code>%%kata {esc(kata.name)}'
                f" {more}</code> on its first line.</p>"
            )
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


def _check(check: Any, outcome: Any, pre: Any, hints: Any) -> str:
    esc = html.escape
    printed = f"<p class='nk-dim'>Your code printed:</p>{pre(check.output)}" if check.output else ""
    if check.outcome == outcome.PASSED:
        return f'<span class="nk-ok">✓</span> {esc(check.description)}{printed}'
    if check.outcome == outcome.SKIPPED:
        why = esc(check.message)
        return f'<span class="nk-dim">– {esc(check.description)} (skipped: {why})</span>'
    if check.outcome == outcome.NOT_RUN:
        return f'<span class="nk-dim">· {esc(check.description)} (did not run)</span>'
    return (
        f'<details><summary><span class="nk-bad">✗</span> {esc(check.description)}</summary>'
        f"{pre(check.message)}{hints(check)}{printed}</details>"
    )


def _show(markup: str) -> None:
    from IPython.display import HTML, display

    display(HTML(markup))


def _error(text: str) -> None:
    _show(f'<pre class="nk-bad" style="color:#cf222e">{html.escape(text)}</pre>')
