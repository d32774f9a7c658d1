"""Progress as a picture, for %kata_progress: an inline SVG drawn by hand.

Three panels. Per kata, one row each in the registry's order: the suggested minutes as a band,
the best mock interview's solve time as a bar on it, coloured faster or slower than suggested,
and in words what there is (a kata without a timed mock says so). Over time: every mock in date
order, its solve time as a share of its kata's suggested time (the 100% line), or a cross in a
lane of its own when it was not solved; so improvement shows across katas. Due in the next 14
days: each kata the schedule (practice.schedule) has due by then, soonest first, a mark on its
day, an overdue one on today's in the overdue colour, with its date in words.

Plain SVG (text, rect, line, circle, path): no script, no font or stylesheet to fetch, so that
JupyterLab, VS Code and Colab draw it alike. Text is currentColor, marks are mid-tone colours:
readable on a light theme and a dark one. The same history always draws the same picture.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from datetime import timedelta

from norm_katas.content import registry
from norm_katas.engine import suggest
from norm_katas.practice import schedule
from norm_katas.practice.progress import KataProgress, clock

FASTER, SLOWER, UNSOLVED = "#2da44e", "#db6d28", "#e5534b"
DUE = "#539bf5"  # a kata due on a day to come (an overdue one is SLOWER's colour)
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
WIDTH = 800
MAX_MOCKS = 40  # the over-time panel shows the last ones; more would not be readable

# The per-kata panel's columns: kata name, bars, what there is in words.
NAME_W, BARS_W = 140, 300
ROW_H = 24


@dataclass(frozen=True)
class MockRun:
    """One mock interview: when it started and its solve time (None: the core never passed)."""

    kata: registry.Kata
    at: str
    seconds: float | None

    @property
    def ratio(self) -> float | None:
        return None if self.seconds is None else self.seconds / (self.kata.minutes * 60)


def mock_runs(progress: list[KataProgress]) -> list[MockRun]:
    """Every mock of every kata, oldest first: its solve time is that of its first grading that
    solved the core (a mock goes on to torch parity after that)."""
    runs = []
    for order, p in enumerate(progress):
        for events in p.mocks.values():
            solved = [e.seconds for e in events if e.solved and e.seconds]
            run = MockRun(p.kata, events[0].at, min(solved, default=None))
            runs.append((run.at, order, run))
    return [run for *_, run in sorted(runs, key=lambda r: r[:2])]


def state(p: KataProgress) -> tuple[str, str]:
    """A kata's state (a word for tests and styling) and what it says, for its row."""
    best = p.best_mock_seconds
    mocks = len(p.mocks)
    count = f" ({mocks} mock{'s' * (mocks != 1)})"
    if best is not None:
        ratio = best / (p.kata.minutes * 60)
        timed = f"best {clock(best)} of {p.kata.minutes}:00"
        if ratio > 1:
            return "slower", f"{timed}, {round((ratio - 1) * 100)}% slower{count}"
        if round((1 - ratio) * 100) == 0:
            return "faster", f"{timed}, on time{count}"
        return "faster", f"{timed}, {round((1 - ratio) * 100)}% faster{count}"
    if p.mocks:
        where = "solved in practice, " if p.solved else ""
        return "mock-unsolved", f"{where}no mock solved yet{count}"
    if p.solved:
        return "untimed", "solved, no timed mock yet"
    if p.gradings:
        return "started", "started, not solved yet"
    return "not-attempted", "not attempted"


# -- SVG pieces ---------------------------------------------------------------------------


def _n(value: float) -> str:
    """A coordinate, the same text for the same number."""
    return f"{value:.1f}".removesuffix(".0")


def _attrs(attrs: dict[str, object]) -> str:
    return "".join(
        f' {name.rstrip("_").replace("_", "-")}="{html.escape(str(v))}"'
        for name, v in attrs.items()
        if v is not None
    )


def _text(x: float, y: float, content: str, **attrs: object) -> str:
    attrs = {"fill": "currentColor", **attrs}
    code = '<tspan font-family="ui-monospace, monospace">{}</tspan>'
    return f'<text x="{_n(x)}" y="{_n(y)}"{_attrs(attrs)}>{_marked(content, code)}</text>'


def _marked(content: str, code: str) -> str:
    """`content` escaped, each `code` span in it (Markdown's backticks) put in `code`'s {}."""
    parts = content.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: nothing to mark
        return html.escape(content)
    return "".join(
        code.format(html.escape(part)) if i % 2 else html.escape(part)
        for i, part in enumerate(parts)
    )


def _rect(x: float, y: float, w: float, h: float, **attrs: object) -> str:
    return f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}"{_attrs(attrs)}/>'


def _line(x1: float, y1: float, x2: float, y2: float, **attrs: object) -> str:
    return (
        f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}"'
        f' stroke="currentColor"{_attrs(attrs)}/>'
    )


def _cross(x: float, y: float, r: float, colour: str) -> str:
    x0, x1, y0, y1 = _n(x - r), _n(x + r), _n(y - r), _n(y + r)
    d = f"M{x0} {y0}L{x1} {y1}M{x0} {y1}L{x1} {y0}"
    return f'<path d="{d}" stroke="{colour}" stroke-width="2.5" stroke-linecap="round"/>'


def _tip(text: str) -> str:
    """A tooltip: what a mark means, in words, on hover."""
    return f"<title>{html.escape(text)}</title>"


# -- the per-kata panel -------------------------------------------------------------------


def _scale_minutes(progress: list[KataProgress]) -> int:
    """The bars' axis in minutes: every suggested time, and best times up to twice the longest
    suggested one (a mock left open for hours would squash the rest; its bar is cut)."""
    longest = max(p.kata.minutes for p in progress)
    best = max((p.best_mock_seconds or 0) / 60 for p in progress)
    return 5 * math.ceil(max(longest, min(best, 2 * longest)) / 5)


def _per_kata(progress: list[KataProgress], top: float) -> tuple[list[str], float]:
    out = [_text(0, top + 14, "Per kata: best mock time against the suggested time",
                 font_weight="600", font_size="14")]  # fmt: skip
    top += 26
    # The legend, in words and marks.
    out.append(_rect(0, top + 2, 22, 12, fill="currentColor", fill_opacity="0.15"))
    out.append(_line(22, top, 22, top + 16, stroke_width="1.5", stroke_opacity="0.7"))
    out.append(_text(28, top + 12, "suggested time", font_size="12"))
    x = 140
    for colour, words in ((FASTER, "best mock, faster"), (SLOWER, "best mock, slower")):
        out.append(_rect(x, top + 4, 22, 8, fill=colour, rx="2"))
        out.append(_text(x + 28, top + 12, words, font_size="12"))
        x += 150
    top += 26
    scale = _scale_minutes(progress)
    per_minute = BARS_W / scale
    step = 5 if scale <= 40 else 10
    axis = top + 10
    for minute in range(0, scale + 1, step):
        gx = NAME_W + minute * per_minute
        label = f"{minute} min" if minute == scale else str(minute)
        out.append(_text(gx, axis, label, font_size="10", text_anchor="middle", fill_opacity="0.7"))
        out.append(_line(gx, axis + 4, gx, axis + 6 + ROW_H * len(progress),
                         stroke_opacity="0.12"))  # fmt: skip
    top = axis + 6
    for i, p in enumerate(progress):
        y = top + i * ROW_H
        kind, words = state(p)
        suggested = p.kata.minutes * per_minute
        row = [
            f'<g class="nk-row" data-kata="{html.escape(p.kata.name)}" data-state="{kind}">',
            _tip(f"{p.kata.name}: {p.kata.title}. Suggested {p.kata.minutes} minutes; {words}."),
            _text(NAME_W - 10, y + 16, p.kata.name, font_size="12", text_anchor="end"),
            _rect(NAME_W, y + 4, suggested, 16, fill="currentColor", fill_opacity="0.15"),
        ]
        best = p.best_mock_seconds
        if best is not None:
            length = min(best / 60, scale) * per_minute
            colour = SLOWER if kind == "slower" else FASTER
            row.append(_rect(NAME_W, y + 8, length, 8, fill=colour, rx="2"))
            if best / 60 > scale:  # cut: say so with an arrow head past its end
                tip = NAME_W + length
                row.append(f'<path d="M{_n(tip)} {_n(y + 5)}l6 7l-6 7z" fill="{colour}"/>')
        # The suggested time's mark over the bar: a slower bar shows how far past it it went.
        row.append(_line(NAME_W + suggested, y + 2, NAME_W + suggested, y + 22,
                         stroke_width="1.5", stroke_opacity="0.7"))  # fmt: skip
        dim = None if kind in ("faster", "slower") else "0.7"
        row.append(_text(NAME_W + BARS_W + 14, y + 16, words, font_size="12", fill_opacity=dim))
        row.append("</g>")
        out.append("".join(row))
    return out, top + ROW_H * len(progress)


# -- the over-time panel ------------------------------------------------------------------


def _over_time(runs: list[MockRun], top: float) -> tuple[list[str], float]:
    out = [_text(0, top + 14, "Over time: each mock's solve time, as a share of the suggested time",
                 font_weight="600", font_size="14")]  # fmt: skip
    top += 22
    if not runs:
        words = (
            f"No mock interview yet: `{suggest.command('mock', where=suggest.NOTEBOOK)}` times one, "  # noqa: E501
            "and its solve time shows here."
        )
        out.append(_text(0, top + 14, words, font_size="12", fill_opacity="0.7"))
        return out, top + 22
    shown = runs[-MAX_MOCKS:]
    first, last = shown[0].at[:10], shown[-1].at[:10]
    span = first if first == last else f"{first} to {last}"
    more = f"; the last {len(shown)} of {len(runs)}" if len(runs) > len(shown) else ""
    out.append(_text(0, top + 12, f"{len(shown)} mock{'s' * (len(shown) != 1)}, {span}{more}"
                     " (UTC dates)", font_size="12", fill_opacity="0.7"))  # fmt: skip
    top += 20
    x = 0.0
    for mark, words in (("dot", "faster"), ("dot-slow", "slower"), ("cross", "not solved")):
        if mark == "cross":
            out.append(_cross(x + 6, top + 8, 4, UNSOLVED))
        else:
            out.append(f'<circle cx="{_n(x + 6)}" cy="{_n(top + 8)}" r="4.5" '
                       f'fill="{SLOWER if mark == "dot-slow" else FASTER}"/>')  # fmt: skip
        out.append(_text(x + 16, top + 12, words, font_size="12"))
        x += 110
    top += 24

    left, right = 76, WIDTH - 90
    lane, plot_top = top + 10, top + 30
    ratios = [r.ratio for r in shown if r.ratio is not None]
    ceiling = min(3.0, max(1.5, math.ceil(max(ratios, default=0) * 2) / 2))
    height = 160
    bottom = plot_top + height

    def y_of(ratio: float) -> float:
        return bottom - min(ratio, ceiling) / ceiling * height

    out.append(_text(left - 8, lane + 4, "not solved", font_size="10", text_anchor="end",
                     fill_opacity="0.7"))  # fmt: skip
    out.append(_line(left, lane, right, lane, stroke_opacity="0.12", stroke_dasharray="2 3"))
    tick = 0.0
    while tick <= ceiling + 1e-9:
        y = y_of(tick)
        out.append(_text(left - 8, y + 4, f"{round(tick * 100)}%", font_size="10",
                         text_anchor="end", fill_opacity="0.7"))  # fmt: skip
        out.append(_line(left, y, right, y, stroke_opacity="0.12"))
        tick += 0.5
    out.append(_line(left, y_of(1), right, y_of(1), stroke_opacity="0.7", stroke_width="1.5",
                     stroke_dasharray="6 4"))  # fmt: skip
    out.append(_text(right + 6, y_of(1) + 4, "suggested", font_size="10"))

    step = min(40.0, (right - left) / len(shown))
    longest = 0
    for i, run in enumerate(shown):
        cx = left + step * (i + 0.5)
        when = run.at[:16].replace("T", " ")
        if run.ratio is None:
            kind = "unsolved"
            tip = f"{run.kata.name}, {when} UTC: not solved ({run.kata.minutes} min suggested)"
            mark = _cross(cx, lane, 4.5, UNSOLVED)
        else:
            kind = "slower" if run.ratio > 1 else "faster"
            tip = (f"{run.kata.name}, {when} UTC: solved in {clock(run.seconds)} of "
                   f"{run.kata.minutes}:00 suggested ({round(run.ratio * 100)}%)")  # fmt: skip
            colour = SLOWER if kind == "slower" else FASTER
            mark = f'<circle cx="{_n(cx)}" cy="{_n(y_of(run.ratio))}" r="4.5" fill="{colour}"/>'
            if run.ratio > ceiling:  # drawn at the top: its share in words beside it
                mark += _text(cx + 7, y_of(ceiling) + 4, f"{round(run.ratio * 100)}%",
                              font_size="10")  # fmt: skip
        label = f"{run.at[5:10]} {run.kata.name}"
        longest = max(longest, len(label))
        turn = f"rotate(-45 {_n(cx)} {_n(bottom + 12)})"
        label_text = _text(cx, bottom + 12, label, font_size="10", text_anchor="end",
                           fill_opacity="0.7", transform=turn)  # fmt: skip
        out.append(
            f'<g class="nk-mock" data-kata="{html.escape(run.kata.name)}" data-state="{kind}">'
            f"{_tip(tip)}{mark}{label_text}</g>"
        )
    # The rotated labels hang below the axis: about 6 px a character at 45 degrees.
    return out, bottom + 16 + longest * 6 * 0.71


# -- the due-soon panel -------------------------------------------------------------------


def _due_soon(plan: schedule.Plan, top: float) -> tuple[list[str], float]:
    horizon = schedule.HORIZON_DAYS
    out = [_text(0, top + 14, f"Due in the next {horizon} days", font_weight="600",
                 font_size="14")]  # fmt: skip
    top += 22
    at = plan.at
    soon = []
    for entry in plan.entries:
        if entry.card.due is not None:
            days = (schedule.day(entry.card.due, at) - schedule.day(at, at)).days
            if days <= horizon:
                soon.append((entry, days))
    never = len(plan.of("new"))
    today = suggest.command("today", where=suggest.NOTEBOOK)
    said = (
        f"{len(soon)} kata{'s' * (len(soon) != 1)} from {at:%a %d %b}"
        if soon
        else (f"Nothing is due in the next {horizon} days")
    )
    if never:
        said += f"; {never} never tried (`{today}` lists them)"
    out.append(_text(0, top + 12, said, font_size="12", fill_opacity="0.7"))
    top += 22
    if not soon:
        return out, top
    per_day = BARS_W / horizon
    for n in range(0, horizon + 1, 7):
        gx = NAME_W + n * per_day
        label = "today" if n == 0 else f"{at + timedelta(days=n):%a %d %b}"
        out.append(_text(gx, top + 10, label, font_size="10", text_anchor="middle",
                         fill_opacity="0.7"))  # fmt: skip
        out.append(_line(gx, top + 14, gx, top + 16 + ROW_H * len(soon), stroke_opacity="0.12"))
    top += 16
    for i, (entry, days) in enumerate(soon):
        y = top + i * ROW_H
        kind = "overdue" if days < 0 else "due"
        words = schedule.due_words(entry.card.due, at)
        if days > 1:
            words += f", {schedule.day(entry.card.due, at):%a %d %b}"
        cx = NAME_W + max(days, 0) * per_day
        colour = SLOWER if days < 0 else DUE
        out.append(
            f'<g class="nk-due" data-kata="{html.escape(entry.kata.name)}" data-state="{kind}" '
            f'data-days="{days}">'
            + _tip(f"{entry.kata.name}: {entry.why}.")
            + _text(NAME_W - 10, y + 16, entry.kata.name, font_size="12", text_anchor="end")
            + f'<circle cx="{_n(cx)}" cy="{_n(y + 12)}" r="5" fill="{colour}"/>'
            + _text(NAME_W + BARS_W + 14, y + 16, words, font_size="12")
            + "</g>"
        )
    return out, top + ROW_H * len(soon)


# -- the picture --------------------------------------------------------------------------


def svg(progress: list[KataProgress], plan: schedule.Plan | None = None) -> str | None:
    """The picture of this progress, or None when there is nothing to draw (no attempt yet).
    `plan`: the schedule's, for the due-soon panel (None: no panel, as where fsrs is missing)."""
    if not any(p.gradings for p in progress):
        return None
    kata_part, y = _per_kata(progress, 0)
    time_part, y = _over_time(mock_runs(progress), y + 24)
    if plan is not None:
        due_part, y = _due_soon(plan, y + 24)
        time_part += due_part
    height = math.ceil(y + 8)
    label = "Your norm-katas progress: solve times against the suggested minutes"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="nk-progress" width="{WIDTH + 8}" '
        f'height="{height}" viewBox="-4 0 {WIDTH + 8} {height}" role="img" '
        f'aria-label="{html.escape(label)}" font-family="{html.escape(FONT)}" '
        'style="max-width:100%;height:auto">'
        f"{_tip(label)}" + "".join(kata_part + time_part) + "</svg>"
    )


def nothing_yet(progress: list[KataProgress]) -> str:
    first = progress[0].kata.name if progress else "layernorm"
    return (
        f"Nothing to draw yet: no attempt in your history. Start with `%kata {first}`: it puts "
        "the kata's stub in a new cell; run that cell to grade it."
    )


def render(progress: list[KataProgress], plan: schedule.Plan | None = None) -> str:
    """HTML for a notebook: the picture, or a line saying how to start when there is none."""
    picture = svg(progress, plan)
    return (
        picture
        if picture is not None
        else f"<p>{_marked(nothing_yet(progress), '<code>{}</code>')}</p>"
    )
