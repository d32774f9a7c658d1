"""Self-tests for the progress picture (%kata_progress): a row for every kata, solve times marked
faster or slower than suggested (and never the other way), unsolved mocks and untimed katas said
in words, escaped text, well-formed SVG with nothing to fetch or run, and a line on how to start
when there is nothing to draw."""

from __future__ import annotations

import dataclasses
import html
import math
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from norm_katas.content import registry
from norm_katas.doors import cells, magics
from norm_katas.practice import chart, history, progress

KATAS = registry.load()
NS = "{http://www.w3.org/2000/svg}"
# What the picture may be made of: shapes and text, nothing that runs or fetches.
ELEMENTS = {"svg", "title", "g", "text", "tspan", "rect", "line", "circle", "path"}


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own history, never the user's."""
    path = tmp_path / "data"
    monkeypatch.setenv("NORM_KATAS_DATA", str(path))
    return path


def mock(kata: str, mock_id: str, *gradings: tuple[float, bool]) -> None:
    """A mock interview: its gradings as (seconds since it started, solved the core)."""
    for seconds, solved in gradings:
        passed = 10 if solved else 7
        history.record(kata, "mock", passed, 10, [], seconds=seconds, budget=3600, mock_id=mock_id)


def dated(*days: str) -> None:
    """Give the history's events these dates, in order (history.record stamps them now)."""
    with sqlite3.connect(history.db_path()) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM events ORDER BY id")]
        for id_, day in zip(ids, days, strict=True):
            conn.execute("UPDATE events SET at = ? WHERE id = ?", (f"{day}T12:00:00+00:00", id_))


def draw(kept: list[progress.KataProgress] | None = None) -> ET.Element:
    """The picture, parsed: it must be well-formed XML of the allowed elements only."""
    svg = chart.svg(progress.collect() if kept is None else kept)
    assert svg is not None
    root = ET.fromstring(svg)  # raises on anything that is not well-formed
    assert root.tag == f"{NS}svg"
    used = {element.tag.removeprefix(NS) for element in root.iter()}
    assert used <= ELEMENTS, used - ELEMENTS
    for element in root.iter():
        assert not [a for a in element.attrib if a.startswith("on") or a.endswith("href")]
    return root


def groups(root: ET.Element, kind: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{NS}g") if g.get("class") == kind]


def rows(root: ET.Element) -> dict[str, ET.Element]:
    return {g.get("data-kata", ""): g for g in groups(root, "nk-row")}


def words(element: ET.Element) -> str:
    return " ".join("".join(t.itertext()) for t in element.iter(f"{NS}text"))


def colours(element: ET.Element) -> set[str]:
    return {e.get("fill", "") for e in element.iter() if e.tag in (f"{NS}rect", f"{NS}circle")}


def test_every_kata_has_a_row_in_registry_order() -> None:
    history.record(KATAS[-1].name, "practice", 1, 10, [])
    found = rows(draw())
    assert list(found) == [k.name for k in KATAS]
    # Each row names its kata, and says what there is: never an empty row.
    for kata in KATAS:
        assert kata.name in words(found[kata.name]) and words(found[kata.name]).strip()


def test_a_mock_slower_than_suggested_is_marked_slower_and_a_faster_one_faster() -> None:
    slow, fast, even = KATAS[0], KATAS[1], KATAS[2]
    mock(slow.name, "s", (slow.minutes * 60 * 1.5, True))
    mock(fast.name, "f", (fast.minutes * 60 * 0.5, True))
    mock(even.name, "e", (even.minutes * 60, True))  # on the suggested time is in time
    root = draw()
    found = rows(root)
    assert found[slow.name].get("data-state") == "slower"
    assert "50% slower" in words(found[slow.name])
    assert colours(found[slow.name]) & {chart.FASTER, chart.SLOWER} == {chart.SLOWER}
    assert found[fast.name].get("data-state") == "faster"
    assert "50% faster" in words(found[fast.name])
    assert colours(found[fast.name]) & {chart.FASTER, chart.SLOWER} == {chart.FASTER}
    assert found[even.name].get("data-state") == "faster" and "on time" in words(found[even.name])
    # Over time, the same mocks on the same side of the suggested time.
    states = {g.get("data-kata"): g.get("data-state") for g in groups(root, "nk-mock")}
    assert states == {slow.name: "slower", fast.name: "faster", even.name: "faster"}


def test_the_best_mock_counts_and_its_solve_time_is_the_grading_that_solved_it() -> None:
    kata = KATAS[0]
    suggested = kata.minutes * 60
    # A slow mock, then one solved in time that went on to torch parity after it.
    mock(kata.name, "a", (suggested * 1.2, False), (suggested * 1.4, True))
    mock(kata.name, "b", (suggested * 0.5, False), (suggested * 0.8, True), (suggested * 2, True))
    root = draw()
    row = rows(root)[kata.name]
    assert row.get("data-state") == "faster" and "20% faster (2 mocks)" in words(row)
    shares = [g.find(f"{NS}title").text for g in groups(root, "nk-mock")]  # type: ignore[union-attr]
    assert "(140%)" in shares[0] and "(80%)" in shares[1], shares


def test_an_unsolved_mock_is_shown_as_not_solved() -> None:
    kata = KATAS[0]
    mock(kata.name, "a", (60, False), (kata.minutes * 60 * 0.5, False))
    root = draw()
    row = rows(root)[kata.name]
    assert row.get("data-state") == "mock-unsolved" and "no mock solved yet (1 mock)" in words(row)
    assert not [r for r in row.iter(f"{NS}rect") if r.get("fill") in (chart.FASTER, chart.SLOWER)]
    (shown,) = groups(root, "nk-mock")
    assert shown.get("data-state") == "unsolved"
    assert shown.find(f"{NS}circle") is None and shown.find(f"{NS}path") is not None  # a cross
    assert "not solved" in (shown.find(f"{NS}title").text or "")  # type: ignore[union-attr]
    # Solved once in practice: the row says both.
    history.record(kata.name, "practice", 10, 10, [])
    assert "solved in practice, no mock solved yet" in words(rows(draw())[kata.name])


def test_a_kata_without_a_timed_mock_says_so_in_words() -> None:
    practised, notebook_only, started = KATAS[0], KATAS[1], KATAS[2]
    history.record(practised.name, "practice", 10, 10, [])
    history.record(notebook_only.name, "notebook", 10, 10, [])
    history.record(started.name, "practice", 3, 10, [])
    root = draw()
    found = rows(root)
    for kata in (practised, notebook_only):
        assert found[kata.name].get("data-state") == "untimed"
        assert "solved, no timed mock yet" in words(found[kata.name])
    assert "started, not solved yet" in words(found[started.name])
    assert all("not attempted" in words(found[k.name]) for k in KATAS[3:])
    assert not groups(root, "nk-mock")
    assert "No mock interview yet" in words(root)  # where the mocks would be
    # The command in code type, not in Markdown's backticks, which SVG shows as they are.
    assert "No mock interview yet: %kata_mock times one" in words(root)
    assert "`" not in words(root) and [t.text for t in root.iter(f"{NS}tspan")] == ["%kata_mock"]


def test_mocks_are_drawn_in_date_order() -> None:
    # Not the registry's order, nor the order recorded: the dates'.
    first, second = KATAS[0], KATAS[1]
    mock(first.name, "late", (60, True))
    mock(second.name, "early", (60, False))
    mock(first.name, "middle", (60, True))
    dated("2025-03-09", "2025-03-02", "2025-03-05")
    root = draw()
    order = [g.get("data-kata") for g in groups(root, "nk-mock")]
    assert order == [second.name, first.name, first.name]
    assert "2025-03-02 to 2025-03-09" in words(root)


def test_a_mock_left_open_for_hours_does_not_squash_the_other_rows() -> None:
    slow, fast = KATAS[0], KATAS[1]
    mock(slow.name, "s", (slow.minutes * 60 * 20, True))
    mock(fast.name, "f", (fast.minutes * 60 * 0.5, True))
    found = rows(draw())
    (bar,) = [r for r in found[fast.name].iter(f"{NS}rect") if r.get("fill") == chart.FASTER]
    # The axis stops at twice the longest suggested time, not at the 20x mock: the fast bar
    # keeps the width that axis gives it (whatever katas the registry holds).
    axis = 5 * math.ceil(2 * max(k.minutes for k in KATAS) / 5)  # in whole 5 minutes
    assert axis < slow.minutes * 20
    assert float(bar.get("width", 0)) >= chart.BARS_W * fast.minutes * 0.5 / axis - 1e-6
    (cut,) = [r for r in found[slow.name].iter(f"{NS}rect") if r.get("fill") == chart.SLOWER]
    assert float(cut.get("width", 0)) <= chart.BARS_W
    assert "1900% slower" in words(found[slow.name])  # the time is still said in full


def test_text_is_escaped() -> None:
    history.record(KATAS[0].name, "practice", 10, 10, [])
    tricky = 'a<b>&"c'
    kept = progress.collect()
    kept[0] = dataclasses.replace(kept[0], kata=dataclasses.replace(kept[0].kata, name=tricky,
                                  title="<script>alert(1)</script>"))  # fmt: skip
    svg = chart.svg(kept)
    assert svg is not None and "<script>" not in svg and "<b>" not in svg
    root = draw(kept)
    assert tricky in rows(root) and tricky in words(rows(root)[tricky])


def test_the_same_history_draws_the_same_picture() -> None:
    mock(KATAS[0].name, "a", (300, True))
    history.record(KATAS[1].name, "practice", 1, 10, [])
    assert chart.svg(progress.collect()) == chart.svg(progress.collect())


def test_nothing_to_draw_says_how_to_start() -> None:
    assert chart.svg(progress.collect()) is None
    # A peek and the untouched stub graded are no attempts: still nothing to draw.
    history.record(KATAS[0].name, "peek")
    history.record(KATAS[0].name, "practice", 0, 10, [], attempt=False)
    page = chart.render(progress.collect())
    assert "<svg" not in page and "Nothing to draw yet" in page
    assert f"<code>%kata {KATAS[0].name}</code>" in page and "`" not in page
    history.record(KATAS[0].name, "practice", 3, 10, [])
    assert chart.render(progress.collect()).startswith("<svg")


def test_kata_progress_shows_the_picture_above_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[str] = []
    texts: list[str] = []
    monkeypatch.setattr(
        cells, "show", lambda markup, text: [shown.append(markup), texts.append(text)]
    )
    magics.progress_magic()
    assert "Nothing to draw yet" in shown[-1] and "Next:" in shown[-1]
    # A plain-text front end (a console, a notebook converted to text) shows the report's text.
    assert "Next:" in texts[-1] and "<" not in texts[-1]
    mock(KATAS[0].name, "a", (300, True))
    magics.progress_magic()
    page = shown[-1]
    assert page.index("<svg") < page.index("</svg>") < page.index("<pre>") < page.index("Next:")
    assert "%kata_mock --kata" in page and "nox -s" not in page  # commands a notebook takes


def test_kata_progress_takes_the_progress_commands_options(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[str] = []
    monkeypatch.setattr(cells, "show", lambda markup, text: shown.append(markup))
    mock(KATAS[0].name, "a", (300, True))
    magics.progress_magic(f"--history {KATAS[0].name}")
    assert "<svg" not in shown[-1] and f"{KATAS[0].name}" in shown[-1] and "mock" in shown[-1]
    magics.progress_magic("--help")
    assert "usage: %kata_progress" in shown[-1] and "--history" in shown[-1]
    for wrong, says in [
        ("--nonsense", "unrecognized arguments: --nonsense"),
        ("layernorm", "a kata name goes with --history (%kata_progress --history layernorm)"),
        ("--history layernrom", "did you mean 'layernorm'?"),
        ('--history "layer', "No closing quotation"),
    ]:
        magics.progress_magic(wrong)
        assert says in html.unescape(shown[-1]), (wrong, shown[-1])
