"""Attempt history: every grading, practice, mock or in a notebook, and every peek at a solution.

A grading records both tiers: the interview core (passed/total, which decide "solved") and
torch parity.

One SQLite file in a per-user data directory (NORM_KATAS_DATA overrides it). Writes are
single transactions in WAL mode with a busy timeout, so a crash, a kill, or two terminals
grading at once never corrupt or lose it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from norm_katas.engine.report import Report

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id        INTEGER PRIMARY KEY,
    at        TEXT    NOT NULL,               -- UTC, ISO 8601
    kata      TEXT    NOT NULL,
    mode      TEXT    NOT NULL CHECK (mode IN ({modes})),
    passed    INTEGER,                        -- interview core checks passed
    total     INTEGER,                        -- interview core checks counted
    failed    TEXT    NOT NULL DEFAULT '[]',  -- JSON list of failed check names, both tiers
    seconds   REAL,                           -- mock: time since the mock started
    budget    REAL,                           -- mock: the time budget in seconds
    mock_id   TEXT,                           -- mock: groups the gradings of one mock
    parity_passed INTEGER,                    -- torch parity checks passed
    parity_total  INTEGER,                    -- torch parity checks counted
    headline  TEXT,                           -- the headline check: the mistake to count
    attempt   INTEGER,                        -- 0: an untouched stub or a file that did not
                                              -- load, not an attempt (NULL in older rows)
    hints     INTEGER                         -- hint steps asked for (--hints, watch's h): 0
                                              -- none, 1 the idea, 2 the formula (NULL: older)
);
CREATE INDEX IF NOT EXISTS events_kata ON events (kata, at);
"""
# A grading's mode: the command line's practice, a mock interview, a notebook's %%kata cell; and
# a peek at a solution. A history from before "notebook" is migrated on first use (MODES_SQL).
# A new way of grading (the test-writing mode of issue 40) is a new mode here and in
# GRADING_MODES: the schedule (practice.schedule) rates its gradings as it rates every other's.
MODES = ("practice", "mock", "notebook", "peek", "tests")
FALSE_ALARM = "false alarm: "  # a tests-mode grading's failed entry for a test of the learner's
GRADING_MODES = ("practice", "mock", "notebook", "tests")
MODES_SQL = ", ".join(f"'{mode}'" for mode in MODES)
SCHEMA = SCHEMA.replace("{modes}", MODES_SQL)
MODE_CHECK = re.compile(r"CHECK \(mode IN \([^)]*\)\)")
# Columns added after the first release: a history written by it gains them on first use.
MIGRATIONS = {
    "parity_passed": "INTEGER", "parity_total": "INTEGER", "headline": "TEXT", "attempt": "INTEGER",
    "hints": "INTEGER",
}  # fmt: skip


def data_dir() -> Path:
    """Where history and backups live: $NORM_KATAS_DATA, else the platform's user data dir."""
    if override := os.environ.get("NORM_KATAS_DATA"):
        return Path(override).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))
    return base / "norm-katas"


def db_path() -> Path:
    return data_dir() / "history.sqlite3"


BUSY_S = 30.0  # how long a write waits for another process's


def wal(conn: sqlite3.Connection) -> None:
    """Turn on write-ahead logging (once per file: it stays on), so that a reader and a writer
    work at once. Turning it on needs the file alone, and SQLite answers a second process doing
    the same at that moment "database is locked" at once, without the busy timeout's wait: two
    gradings recording into a new history together. So wait here, as the timeout would."""
    deadline = time.monotonic() + BUSY_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


@contextmanager
def connect() -> Iterator[sqlite3.Connection]:
    path = db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, taking the write lock up front.
    conn = sqlite3.connect(path, timeout=BUSY_S, isolation_level=None)
    try:
        wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(SCHEMA)
        _allow_modes(conn)
        have = {row[1] for row in conn.execute("PRAGMA table_info(events)")}
        for column, kind in MIGRATIONS.items():
            if column not in have:
                # Another process may have added it just now.
                with contextlib.suppress(sqlite3.OperationalError):
                    conn.execute(f"ALTER TABLE events ADD COLUMN {column} {kind}")
        yield conn
    finally:
        conn.close()


def _allow_modes(conn: sqlite3.Connection) -> None:
    """Make the table of an older history accept every mode in MODES. SQLite cannot change a
    CHECK constraint, so the table is copied into one with the new constraint, in one
    transaction: another process doing the same meanwhile waits, then finds it done. (The
    first release's table has no constraint: nothing to do.)"""

    def outdated() -> str | None:
        row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()
        sql = row[0] if row else ""
        return sql if MODE_CHECK.search(sql) and MODES_SQL not in sql else None

    if outdated() is None:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if (old := outdated()) is not None:
            columns = ", ".join(row[1] for row in conn.execute("PRAGMA table_info(events)"))
            conn.execute("ALTER TABLE events RENAME TO events_before_modes")
            conn.execute(MODE_CHECK.sub(f"CHECK (mode IN ({MODES_SQL}))", old))
            copy = f"INSERT INTO events ({columns}) SELECT {columns} FROM events_before_modes"
            conn.execute(copy)
            conn.execute("DROP TABLE events_before_modes")  # its index goes with it
            conn.execute("CREATE INDEX IF NOT EXISTS events_kata ON events (kata, at)")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


@dataclass(frozen=True)
class Event:
    at: str
    kata: str
    mode: str
    passed: int | None
    total: int | None
    failed: list[str]
    seconds: float | None
    budget: float | None
    mock_id: str | None
    parity_passed: int | None = None
    parity_total: int | None = None
    headline: str | None = None  # None: solved, or recorded before headlines were
    attempt: bool = True  # False: a grading of the untouched stub or of a file that did not load
    hints: int = 0  # the hint steps asked for (0 in rows recorded before hints were)

    @property
    def solved(self) -> bool:
        """The interview core passed; in the test-writing mode, every interview mistake was
        caught with no false alarm (record_proof)."""
        caught = self.total is not None and self.total > 0 and self.passed == self.total
        if self.mode == "tests":
            return caught and not any(f.startswith(FALSE_ALARM) for f in self.failed)
        return caught

    @property
    def parity_solved(self) -> bool:
        return self.solved and self.parity_passed == self.parity_total


def record(
    kata: str,
    mode: str,
    passed: int | None = None,
    total: int | None = None,
    failed: list[str] | None = None,
    seconds: float | None = None,
    budget: float | None = None,
    mock_id: str | None = None,
    parity_passed: int | None = None,
    parity_total: int | None = None,
    headline: str | None = None,
    attempt: bool = True,
    hints: int = 0,
    at: datetime | None = None,
) -> None:
    """Append one event in its own transaction, dated now (or `at`: a seeded history, for the
    self-tests and the docs' examples)."""
    when = (at or datetime.now(timezone.utc)).astimezone(timezone.utc)
    at_text = when.isoformat(timespec="seconds")
    failed_json = json.dumps(failed or [])
    row = (at_text, kata, mode, passed, total, failed_json, seconds, budget, mock_id, parity_passed,
           parity_total, headline, int(attempt), hints)  # fmt: skip
    with connect() as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "INSERT INTO events (at, kata, mode, passed, total, failed, seconds, budget,"
                " mock_id, parity_passed, parity_total, headline, attempt, hints)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def events(kata: str | None = None) -> list[Event]:
    """All events, oldest first (only one kata's if given)."""
    if not db_path().exists():
        return []
    query = (
        "SELECT at, kata, mode, passed, total, failed, seconds, budget, mock_id, parity_passed,"
        " parity_total, headline, attempt, hints FROM events"
    )
    args: tuple[str, ...] = ()
    if kata is not None:
        query, args = query + " WHERE kata = ?", (kata,)
    with connect() as conn:
        rows = conn.execute(query + " ORDER BY id", args).fetchall()
    return [
        Event(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), *r[6:12], r[12] != 0, r[13] or 0)
        for r in rows
    ]


def record_report(report: Report, mode: str, hints: int = 0, **mock: object) -> None:
    """Record a grading from the grader's report; `hints`: the hint steps asked for."""
    from norm_katas.engine.report import CORE, PARITY, Outcome, untouched

    not_passed = (Outcome.FAILED, Outcome.NOT_RUN)
    failed = [c.name for c in report.checks if c.outcome in not_passed]
    passed, total = report.tally(CORE)
    parity_passed, parity_total = report.tally(PARITY)
    if report.load_error:  # nothing ran: every check counts as failed
        passed = 0
    # The mistake to count: a failure met by another check's fail_for is that check's.
    headline = report.headline
    headline = (headline and report.owner(headline)) or headline
    record(
        report.kata, mode, passed, total, failed, parity_passed=parity_passed,
        parity_total=parity_total, headline=headline.name if headline else None,
        # Grading the stub as handed out, or a file that does not load, tries nothing yet.
        attempt=not report.load_error and not untouched(report), hints=hints,
        **mock,  # type: ignore[arg-type]
    )  # fmt: skip


def record_proof(verdict: Any, hints: int = 0) -> None:
    """Record a grading of the test-writing mode (engine.proving.verdict.Verdict), as mode
    "tests": passed of total are the interview mistakes caught of those counted, `failed` the
    ones missed and each test that raised a false alarm ("false alarm: test_x"), and the
    mutants its stretch, in the parity columns. Event.solved reads both."""
    missed = [m.key for m in verdict.mistakes if m.caught_by is None]
    alarms = [f"{FALSE_ALARM}{t}" for t in sorted({a.test for a in verdict.alarms})]
    failed = [*alarms, *missed]
    record(
        verdict.kata, "tests", verdict.caught, len(verdict.mistakes), failed,
        parity_passed=verdict.mutants_caught, parity_total=verdict.mutants,
        headline=failed[0] if failed else None,
        attempt=not verdict.load_error and bool(verdict.tests), hints=hints,
    )  # fmt: skip
