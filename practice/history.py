"""Attempt history: every grading, practice or mock, and every peek at a solution.

One SQLite file in a per-user data directory (NORM_KATAS_DATA overrides it). Writes are
single transactions in WAL mode with a busy timeout, so a crash, a kill, or two terminals
grading at once never corrupt or lose it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id        INTEGER PRIMARY KEY,
    at        TEXT    NOT NULL,               -- UTC, ISO 8601
    kata      TEXT    NOT NULL,
    mode      TEXT    NOT NULL CHECK (mode IN ('practice', 'mock', 'peek')),
    passed    INTEGER,
    total     INTEGER,
    failed    TEXT    NOT NULL DEFAULT '[]',  -- JSON list of failed check names
    seconds   REAL,                           -- mock: time since the mock started
    budget    REAL,                           -- mock: the time budget in seconds
    mock_id   TEXT                            -- mock: groups the gradings of one mock
);
CREATE INDEX IF NOT EXISTS events_kata ON events (kata, at);
"""


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


@contextmanager
def connect() -> Iterator[sqlite3.Connection]:
    path = db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, taking the write lock up front.
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(SCHEMA)
        yield conn
    finally:
        conn.close()


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

    @property
    def solved(self) -> bool:
        return self.total is not None and self.total > 0 and self.passed == self.total


def record(
    kata: str,
    mode: str,
    passed: int | None = None,
    total: int | None = None,
    failed: list[str] | None = None,
    seconds: float | None = None,
    budget: float | None = None,
    mock_id: str | None = None,
) -> None:
    """Append one event in its own transaction."""
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    row = (at, kata, mode, passed, total, json.dumps(failed or []), seconds, budget, mock_id)
    with connect() as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "INSERT INTO events"
                " (at, kata, mode, passed, total, failed, seconds, budget, mock_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
    query = "SELECT at, kata, mode, passed, total, failed, seconds, budget, mock_id FROM events"
    args: tuple[str, ...] = ()
    if kata is not None:
        query, args = query + " WHERE kata = ?", (kata,)
    with connect() as conn:
        rows = conn.execute(query + " ORDER BY id", args).fetchall()
    return [Event(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), *r[6:]) for r in rows]


def record_report(report: dict, mode: str, **mock: object) -> None:
    """Record a grading from the grader's JSON report."""
    failed = [c["name"] for c in report.get("checks", []) if c["outcome"] in ("failed", "not run")]
    record(report["kata"], mode, report.get("passed", 0), report.get("total", 0), failed, **mock)  # type: ignore[arg-type]
