"""What a notebook shows, as HTML (and as text where a front end shows text): a grading's
verdict, for a %%kata cell and norm_katas.check, and a mock interview's scorecard and debrief.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from norm_katas.content import registry
from norm_katas.engine.request import GRADER_FAILED, USAGE, Request

if TYPE_CHECKING:
    from norm_katas.practice.mock import Mock

# -- the verdict as HTML ------------------------------------------------------------------

STYLE = (
    "<style>.nk-verdict summary,.nk-debrief summary{cursor:pointer}"
    ".nk-verdict pre,.nk-debrief pre{white-space:pre-wrap;margin:.3em 0}"
    ".nk-ok{color:#1a7f37}.nk-bad{color:#cf222e}.nk-dim{color:#6e7781}</style>"
)


def proof(request: Request, code: int, said: str) -> str:
    """The test-writing mode's verdict in a cell: the report as the terminal prints it."""
    kata = request.kata
    esc = html.escape
    attrs = f'data-kata="{esc(kata.name)}" data-code="{code}" data-mode="tests"'
    text = in_cell(said, request.file)
    return (
        f'{STYLE}<div class="nk-verdict" {attrs}><h3>Your tests of {esc(kata.title)}</h3>'
        f"<pre>{esc(text)}</pre></div>"
    )


def verdict(request: Request, code: int, report: Any, said: str, cell: bool = True) -> str:
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
        if (owner := report.owner(head)) is not None:  # the mistake it shows is another's
            attrs += f' data-mistake="{esc(owner.function)}"'
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
        title, met_by = report.mistake(head)
        met_by = f'<br><span class="nk-dim">({prose(met_by)})</span>' if met_by else ""
        parts.append(
            f'<p>{esc(lead)}<span class="nk-bad">✗</span> <b>{prose(title)}</b>{met_by}</p>'
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


# -- the end of a mock interview ----------------------------------------------------------


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
