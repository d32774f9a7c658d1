"""Self-tests for the practice schedule (practice.schedule, `today`): each sitting's FSRS rating,
the due dates and the order checked against fsrs's own intervals on a seeded history, `today`,
progress and the mock agreeing on what is due through every door, an empty history and an older
release's history, and the pinned fsrs release."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import fsrs
import pytest

from norm_katas.content import registry
from norm_katas.doors import cells, magics
from norm_katas.practice import chart, history, mock, progress, schedule, today

KATAS = registry.load()
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own history, never the user's, and plans for NOW."""
    path = tmp_path / "data"
    monkeypatch.setenv("NORM_KATAS_DATA", str(path))
    monkeypatch.delenv("NORM_KATAS_INVOKED_FROM", raising=False)
    monkeypatch.setattr(schedule, "_FROZEN", NOW)
    return path


def ago(days: float, minutes: float = 0) -> datetime:
    return NOW - timedelta(days=days) + timedelta(minutes=minutes)


def practice(kata: str, when: datetime, solved: bool, hints: int = 0, headline: str = "") -> None:
    mistake = None if solved else (headline or "test_x")
    failed = [mistake] if mistake else []
    history.record(kata, "practice", 10 if solved else 4, 10, failed, headline=mistake,
                   hints=hints, at=when)  # fmt: skip


def mocked(kata: registry.Kata, when: datetime, share: float | None, mock_id: str) -> None:
    """A mock solved at `share` of the kata's suggested minutes (None: not solved)."""
    seconds = kata.minutes * 60 * (share or 1.0)
    history.record(kata.name, "mock", 4 if share is None else 10, 10, [], seconds=seconds,
                   budget=kata.minutes * 60, mock_id=mock_id, at=when)  # fmt: skip


def fsrs_due(*reviews: tuple[datetime, str]) -> datetime:
    """FSRS's own answer: a fresh card reviewed with these (time, rating), by a scheduler set up
    as documented (no learning steps, no fuzz), not by schedule.scheduler()."""
    sched = fsrs.Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    card = fsrs.Card(card_id=1, due=reviews[0][0])
    for when, rating in reviews:
        card, _ = sched.review_card(card, fsrs.Rating[rating], when.astimezone(timezone.utc))
    return card.due


def card(name: str) -> schedule.Card:
    return next(c for c in schedule.cards(NOW) if c.kata.name == name)


# -- ratings ------------------------------------------------------------------------------


def ratings(name: str) -> list[str]:
    return [s.rating for s in card(name).sittings]


def test_each_sitting_is_rated_as_docs_practice_says() -> None:
    layernorm = registry.get("layernorm")  # 15 suggested minutes
    # Not solved: Again. Twenty failing saves and then a solve are one sitting: Good.
    practice("layernorm", ago(20), solved=False)
    for minute in range(0, 10):
        practice("layernorm", ago(18, minute), solved=False)
    practice("layernorm", ago(18, 12), solved=True)
    # Over the suggested minutes from its first grading: Hard (each gap under an hour).
    for minute in (0, 40):
        practice("layernorm", ago(16, minute), solved=False)
    practice("layernorm", ago(16, 70), solved=True)
    # Hints on a failing grading: Hard; hints asked for on the solving grading only: Good.
    practice("layernorm", ago(14), solved=False, hints=1)
    practice("layernorm", ago(14, 5), solved=True, hints=1)
    practice("layernorm", ago(12), solved=True, hints=2)
    # Mocks: under half the time Easy, in time Good, over it Hard, not solved Again.
    mocked(layernorm, ago(10), 0.4, "a")
    mocked(layernorm, ago(8), 0.9, "b")
    mocked(layernorm, ago(6), 1.2, "c")
    mocked(layernorm, ago(4), None, "d")
    assert ratings("layernorm") == [
        "Again", "Good", "Hard", "Hard", "Good", "Easy", "Good", "Hard", "Again",
    ]  # fmt: skip


def test_a_peek_before_solving_is_again_and_after_it_is_a_comparison() -> None:
    history.record("dropout", "peek", at=ago(5))  # a peek alone is a sitting
    history.record("dropout", "peek", at=ago(3))
    practice("dropout", ago(3, 20), solved=True)  # solved after reading the answer
    practice("dropout", ago(1), solved=True)
    history.record("dropout", "peek", at=ago(1, 2))  # comparing with the reference
    assert ratings("dropout") == ["Again", "Again", "Good"]


def test_untouched_stubs_are_no_sitting_and_an_hour_apart_is_another() -> None:
    history.record("rmsnorm", "practice", 0, 10, ["test_x"], attempt=False, at=ago(2))
    assert card("rmsnorm").due is None  # never tried: nothing scheduled
    practice("rmsnorm", ago(2), solved=False)
    practice("rmsnorm", ago(2, 59), solved=False)
    practice("rmsnorm", ago(2, 59 + 61), solved=True)
    assert ratings("rmsnorm") == ["Again", "Good"]


# -- due dates and order, against fsrs ----------------------------------------------------


def seed_the_four_cases() -> dict[str, datetime]:
    """A kata failed today, one solved with hints, one solved easily three times, peeks; and
    the due date fsrs gives each for the ratings docs/practice.md promises."""
    dropout, rmsnorm = registry.get("dropout"), registry.get("rmsnorm")
    practice("layernorm", ago(0, -60), solved=False, headline="test_eps_inside_sqrt")
    practice("layernorm", ago(0, -50), solved=False, headline="test_eps_inside_sqrt")
    practice("groupnorm", ago(6), solved=False, hints=1)
    practice("groupnorm", ago(6, 10), solved=True, hints=1)
    for days in (30, 22, 12):
        mocked(dropout, ago(days), 0.3, f"easy{days}")
    history.record("batchnorm", "peek", at=ago(4))
    mocked(rmsnorm, ago(9), 0.9, "good")
    return {
        "layernorm": fsrs_due((ago(0, -50), "Again")),
        "groupnorm": fsrs_due((ago(6, 10), "Hard")),
        "dropout": fsrs_due(*((ago(d), "Easy") for d in (30, 22, 12))),
        "batchnorm": fsrs_due((ago(4), "Again")),
        "rmsnorm": fsrs_due((ago(9), "Good")),
    }


def test_due_dates_are_fsrs_own_intervals_and_the_order_is_today_s() -> None:
    expected = seed_the_four_cases()
    for name, due in expected.items():
        assert card(name).due == due, name
    # FSRS's intervals, as the docs explain them: a failure comes back the next day.
    assert expected["layernorm"] - ago(0, -50) == timedelta(days=1)
    assert expected["dropout"] > expected["groupnorm"] + timedelta(days=20)
    plan = schedule.plan(NOW)
    due = [e.kata.name for e in plan.of("due")]
    # Due on or before today, most overdue first: rmsnorm (Good 9 days ago, 2-day interval),
    # groupnorm (Hard 6 days ago), batchnorm (peeked 4 days ago).
    assert due == sorted(due, key=lambda n: expected[n]) == ["rmsnorm", "groupnorm", "batchnorm"]
    new = [e.kata for e in plan.of("new")]
    ranks = [schedule.DIFFICULTIES.index(k.difficulty) for k in new]
    assert ranks == sorted(ranks) and {k.name for k in new}.isdisjoint(expected)
    order = [k.name for k in KATAS]
    for rank in set(ranks):  # within a difficulty, the registry's order
        same = [k.name for k in new if schedule.DIFFICULTIES.index(k.difficulty) == rank]
        assert same == sorted(same, key=order.index)
    # Not due yet, weakest (soonest due) first: failed today, then the easy one.
    assert [e.kata.name for e in plan.of("ahead")] == ["layernorm", "dropout"]
    assert [e.kata.name for e in plan.entries] == due + [k.name for k in new] + [
        "layernorm", "dropout",
    ]  # fmt: skip


def test_every_registry_difficulty_has_its_rank() -> None:
    assert {k.difficulty for k in KATAS} <= set(schedule.DIFFICULTIES)


def test_the_reasons_say_why_in_words() -> None:
    seed_the_four_cases()
    why = {e.kata.name: e.why for e in schedule.plan(NOW).entries}
    assert why["rmsnorm"] == (
        f"last solved 9 days ago in a mock, in {round(0.9 * 10)} min (suggested 10); due 7 days ago"
    )
    assert why["groupnorm"].startswith(
        "last solved 6 days ago with hints, in practice (untimed); due"
    )
    assert why["batchnorm"].startswith("peeked at the solution 4 days ago, before solving it; due")
    eps = "eps is added to the variance, inside the square root, as given (0.0 too)"
    assert why["layernorm"] == f"not solved today: failed '{eps}' twice; due tomorrow"
    assert why["layernorm-backward"] == "hard, never tried"


def test_the_same_history_gives_the_same_plan() -> None:
    seed_the_four_cases()
    first, second = schedule.plan(NOW), schedule.plan(NOW)
    assert [(e.kata.name, e.card.due, e.why) for e in first.entries] == [
        (e.kata.name, e.card.due, e.why) for e in second.entries
    ]
    # Only what happened by `at` counts: planned a week ago, today's failure is not there.
    earlier = schedule.plan(ago(7))
    assert "layernorm" in [e.kata.name for e in earlier.of("new")]


def test_today_is_the_calendar_day_where_the_learner_is() -> None:
    practice("dropout", ago(3), solved=True)  # Good: due 2 days later, at 12:00 UTC
    due = card("dropout").due
    # At 02:00 UTC that day it is due today in UTC, and not yet in New York (21:00 the day
    # before), though the moment is the same.
    morning = due - timedelta(hours=10)
    assert [e.kata.name for e in schedule.plan(morning).of("due")] == ["dropout"]
    west = morning.astimezone(timezone(timedelta(hours=-5)))
    assert schedule.plan(west).of("due") == []


# -- the doors ----------------------------------------------------------------------------


def cli(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NORM_KATAS_INVOKED_FROM"}
    env["NORM_KATAS_DATA"] = str(data)
    return subprocess.run([sys.executable, "-m", "norm_katas", *args], cwd=registry.ROOT,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip


def test_today_progress_and_the_mock_agree_on_what_is_due(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seeded relative to the real clock: the commands below run in processes of their own.
    monkeypatch.setattr(schedule, "_FROZEN", None)
    real = datetime.now(timezone.utc)
    for name, days in (("groupnorm", 5), ("dropout", 3)):
        history.record(name, "practice", 4, 10, ["test_x"], headline="test_x",
                       at=real - timedelta(days=days))  # fmt: skip
    first = schedule.plan().first
    assert first is not None and first.kind == "due" and first.kata.name == "groupnorm"
    said = cli("today", data=data_dir)
    assert said.returncode == 0, said.stderr
    lines = said.stdout.splitlines()
    assert lines[0].startswith("Today, ") and ": 2 due" in lines[0], said.stdout
    due = lines[lines.index("Due, most overdue first:") + 1 :][:2]
    assert [line.split()[0] for line in due] == ["groupnorm", "dropout"], said.stdout
    assert "due 4 days ago" in due[0] and "Start with groupnorm:" in said.stdout
    shown = cli("progress", data=data_dir).stdout
    assert "Next: groupnorm (" in shown and "Due today: 2 katas" in shown, shown
    row = next(line for line in shown.splitlines() if line.startswith("groupnorm "))
    assert row.endswith(", 4 days ago"), row
    assert mock.pick(None, None, 7)[0].name == "groupnorm"  # --seed changes nothing
    texts: list[str] = []
    monkeypatch.setattr(cells, "show", lambda markup, text: texts.append(text))
    magics.today_magic("")
    assert "Start with groupnorm:\n    %kata groupnorm\n    %kata_mock" in texts[-1], texts
    magics.progress_magic("")
    assert "Next: groupnorm (" in texts[-1]


def test_minutes_fit_a_session_from_the_suggested_minutes() -> None:
    practice("batchnorm", ago(5), solved=False)  # due, 30 min
    practice("dropout", ago(5), solved=False)  # due, 10 min
    plan = schedule.plan(NOW)
    assert [e.kata.name for e in schedule.fit(plan.entries, 40)] == ["batchnorm", "dropout"]
    # 35 minutes: batchnorm, then only what still fits in the 5 left (no kata is that short).
    assert [e.kata.name for e in schedule.fit(plan.entries, 35)] == ["batchnorm"]
    text = today.text(40)
    assert text.startswith("A 40-minute session, Tue 10 Mar 2026: 2 katas, 40 min.")
    assert "Left for another day: " in text
    assert "No kata fits a 5-minute session: the quickest" in today.text(5)
    # 20 minutes: batchnorm, the mock's pick, does not fit; the session starts with dropout,
    # and the mock that says so names it.
    short = today.text(20)
    assert "Start with dropout:" in short and "python -m norm_katas mock --kata dropout" in short
    assert "the mock picks" not in short


def test_an_empty_history_says_how_to_start(data_dir: Path) -> None:
    text = today.text()
    easiest = schedule.plan(NOW).entries[0].kata
    assert text.startswith("Your history is empty: nothing is scheduled yet.")
    assert f"python -m norm_katas grade {easiest.name}" in text and easiest.difficulty == "easy"
    assert "Next: " in progress.report() and not data_dir.exists()  # nothing written


def test_a_history_of_the_first_release_is_scheduled(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    with sqlite3.connect(history.db_path()) as conn:  # no hints, headline, attempt or parity
        conn.executescript(
            "CREATE TABLE events (id INTEGER PRIMARY KEY, at TEXT NOT NULL, kata TEXT NOT NULL,"
            " mode TEXT NOT NULL, passed INTEGER, total INTEGER, failed TEXT NOT NULL DEFAULT"
            " '[]', seconds REAL, budget REAL, mock_id TEXT);"
            "INSERT INTO events (at, kata, mode, passed, total) VALUES"
            f" ('{ago(4).isoformat()}', 'dropout', 'practice', 20, 20),"
            f" ('{ago(3).isoformat()}', 'rmsnorm', 'practice', 3, 20);"
        )
    before = history.events()
    assert ratings("dropout") == ["Good"] and ratings("rmsnorm") == ["Again"]
    assert card("dropout").due == fsrs_due((ago(4), "Good"))
    assert "not solved 3 days ago (core 3/20); due 2 days ago" in today.text()
    assert history.events() == before  # read, never rewritten


def test_without_fsrs_the_commands_say_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fsrs", None)  # `import fsrs` raises ImportError
    with pytest.raises(schedule.Unavailable, match=re.escape(f"pip install '{schedule.FSRS}'")):
        today.text()
    shown = progress.report()
    assert schedule.FSRS in shown and "next due" not in shown  # the table, without the dates


def test_fsrs_is_pinned_where_it_is_installed_from() -> None:
    """pyproject.toml pins the release the schedule is proven with, and it is the one here: a
    new fsrs release changes nothing until the pin moves and these self-tests pass with it."""
    from importlib.metadata import version

    pins = registry.read_toml(registry.ROOT / "pyproject.toml")["project"]["dependencies"]
    assert schedule.FSRS in pins
    assert version("fsrs") == schedule.FSRS.partition("==")[2]


# -- the notebook's chart -----------------------------------------------------------------


def test_the_chart_shows_what_is_due_in_the_next_14_days() -> None:
    import xml.etree.ElementTree as ET

    expected = seed_the_four_cases()
    svg = chart.svg(progress.collect(), schedule.plan(NOW))
    assert svg is not None
    ns = "{http://www.w3.org/2000/svg}"
    rows = {
        g.get("data-kata"): g
        for g in ET.fromstring(svg).iter(f"{ns}g")
        if g.get("class") == "nk-due"
    }
    soon = {n for n, due in expected.items() if (due.date() - NOW.date()).days <= 14}
    assert set(rows) == soon and "dropout" not in soon  # three easy mocks: months away
    assert (
        rows["rmsnorm"].get("data-state") == "overdue" and rows["rmsnorm"].get("data-days") == "-7"
    )
    assert (
        rows["layernorm"].get("data-state") == "due" and rows["layernorm"].get("data-days") == "1"
    )
    words = " ".join("".join(t.itertext()) for t in rows["layernorm"].iter(f"{ns}text"))
    assert "due tomorrow" in words


def test_nox_sessions_plan_with_the_scheduler_they_install(data_dir: Path) -> None:
    """`nox -s today` and `nox -s progress` need no torch: they run in .nox/practice, which
    holds the pinned fsrs (made once, in seconds), and say the commands as nox takes them."""
    nox_python = os.environ.get("NORM_KATAS_NOX")
    if nox_python is None:
        pytest.skip("needs nox: `nox -s tests` names the Python that runs it (NORM_KATAS_NOX)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORM_KATAS_")}
    env["NORM_KATAS_DATA"] = str(data_dir)
    noxfile = str(registry.ROOT / "noxfile.py")
    said = {}
    for session, args in (("today", ["--minutes", "30"]), ("progress", [])):
        done = subprocess.run([nox_python, "-m", "nox", "-f", noxfile, "-s", session, "--", *args],
                              cwd=registry.ROOT, env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        said[session] = done.stdout
    easiest = schedule.plan(NOW).entries[0].kata.name
    assert "A 30-minute session, " in said["today"] and f"nox -s kata-{easiest}" in said["today"]
    assert f"Next: {easiest} (" in said["progress"] and "nox -s today plans" in said["progress"]


@pytest.mark.parametrize(("rating", "days"), [("Again", 1), ("Hard", 1), ("Good", 2), ("Easy", 8)])
def test_first_intervals_are_as_docs_practice_says(rating: str, days: int) -> None:
    """docs/practice.md: a first Again or Hard is due the next day, a first Good two days
    later, a first Easy about eight (fsrs's default parameters, no learning steps)."""
    card, _ = schedule.scheduler().review_card(
        fsrs.Card(card_id=1, due=NOW), fsrs.Rating[rating], NOW
    )
    assert card.due - NOW == timedelta(days=days)
