"""Self-tests for practice: history, progress, hints, reset, solution peeks and the mock
interview, driven end to end in a pseudo-terminal as a learner would use it."""

from __future__ import annotations

import ast
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from grader import history, mock, progress, registry

KATAS = registry.load()


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own history and backups, never the user's."""
    path = tmp_path / "data"
    monkeypatch.setenv("NORM_KATAS_DATA", str(path))
    return path


def cli(*args: str, cwd: Path = registry.ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


# -- history ------------------------------------------------------------------------------


def test_history_round_trip() -> None:
    history.record("layernorm", "practice", 3, 20, ["test_eps_inside_sqrt"])
    history.record("layernorm", "mock", 20, 20, [], seconds=61.5, budget=900, mock_id="m1")
    events = history.events("layernorm")
    assert [e.mode for e in events] == ["practice", "mock"]
    assert events[0].failed == ["test_eps_inside_sqrt"] and not events[0].solved
    assert events[1].solved and events[1].seconds == 61.5 and events[1].mock_id == "m1"


WRITER = """
import sys
from grader import history
for i in range(int(sys.argv[1])):
    history.record("dropout", "practice", i, 100, ["test_x"])
    print(i + 1, flush=True)
"""


def _integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def test_history_two_writers_at_once_lose_nothing(data_dir: Path) -> None:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, "150"], cwd=registry.ROOT, stdout=subprocess.DEVNULL
        )
        for _ in range(2)
    ]
    assert all(w.wait(timeout=120) == 0 for w in writers)
    assert len(history.events()) == 300
    assert _integrity(history.db_path()) == "ok"


def test_history_survives_a_kill_during_writes(data_dir: Path) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, "100000"],
        cwd=registry.ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    committed = 0
    while committed < 50:
        committed = int(writer.stdout.readline())
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    rest = writer.stdout.read().split()
    committed = int(rest[-1]) if rest else committed
    assert _integrity(history.db_path()) == "ok"
    # every reported commit is there; at most one more committed before its print
    assert committed <= len(history.events()) <= committed + 1
    history.record("dropout", "practice", 1, 1, [])  # and the file is still writable
    assert _integrity(history.db_path()) == "ok"


def test_gradings_are_recorded_but_not_the_reference_solution(tmp_path: Path) -> None:
    wrong = registry.ROOT / "tests" / "catalogue" / "layernorm" / "eps_outside_sqrt.py"
    assert cli("grade", "layernorm", "--impl", str(wrong)).returncode == 1
    assert cli("grade", "layernorm", "--impl", "solutions").returncode == 0
    (event,) = history.events()
    assert event.mode == "practice" and event.kata == "layernorm"
    assert "test_eps_inside_sqrt" in event.failed and 0 < event.passed < event.total


# -- progress -----------------------------------------------------------------------------


def test_progress_table_and_next_kata() -> None:
    history.record("layernorm", "practice", 19, 20, ["test_numerically_stable"])
    history.record("layernorm", "mock", 20, 20, [], seconds=600, budget=900, mock_id="a")
    history.record("batchnorm", "practice", 10, 25, ["test_running_var_unbiased"])
    history.record("batchnorm", "practice", 12, 25, ["test_running_var_unbiased"])
    history.record("rmsnorm", "peek")
    text = cli("progress").stdout
    rows = {line.split()[0]: line for line in text.splitlines() if line.split()}
    assert "yes" in rows["layernorm"] and "10:00 / 15:00" in rows["layernorm"]
    assert "running_var_unbiased ×2" in rows["batchnorm"] and " no " in rows["batchnorm"]
    assert "1 peek" in rows["rmsnorm"]
    assert "Next: batchnorm" in text and "started but not solved" in text


def test_mock_pick_favours_unsolved_katas() -> None:
    for kata in KATAS[1:]:
        history.record(kata.name, "mock", 5, 5, [], seconds=60, budget=600, mock_id=kata.name)
    rng = random.Random(0)
    picks = [progress.pick_for_mock(progress.collect(), rng).name for _ in range(400)]
    # weights 4 (never solved) against 1 each for the four solved quickly: 50% expected
    assert 0.38 < picks.count(KATAS[0].name) / len(picks) < 0.62


# -- hints and follow-ups -----------------------------------------------------------------


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_every_check_has_a_description_and_hints_in_steps(kata: registry.Kata) -> None:
    tree = ast.parse(kata.suite.read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            doc = ast.get_docstring(node) or ""
            paragraphs = [p for p in doc.split("\n\n") if p.strip()]
            assert len(paragraphs) >= 3, (
                f"{node.name}: needs a description, the idea and the formula"
            )
            assert len(paragraphs[0].splitlines()) == 1, f"{node.name}: description on one line"


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_every_kata_has_follow_up_questions(kata: registry.Kata) -> None:
    questions = mock.follow_ups(kata)
    assert 2 <= len(questions) <= 4
    assert all(q.endswith("?") and len(a) > 80 for q, a in questions)


def test_hints_are_shown_only_when_asked() -> None:
    wrong = str(registry.ROOT / "tests" / "catalogue" / "layernorm" / "eps_outside_sqrt.py")
    plain = cli("grade", "layernorm", "--impl", wrong).stdout
    assert "Hint (" not in plain and "-- --hints" in plain
    idea = cli("grade", "layernorm", "--impl", wrong, "--hints").stdout
    assert "Hint (idea)" in idea and "Hint (formula)" not in idea
    both = cli("grade", "layernorm", "--impl", wrong, "--hints", "2").stdout
    assert "Hint (idea)" in both and "Hint (formula)" in both


# -- reset and solution -------------------------------------------------------------------


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    """This working tree as a fresh git repository, so a reset cannot touch the real katas/."""
    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns(".git", ".nox", "__pycache__", "*.pyc")
    shutil.copytree(registry.ROOT, copy, ignore=ignore)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
    subprocess.run(["git", "add", "-A"], cwd=copy, check=True)
    subprocess.run([*git, "commit", "-qm", "stubs", "--no-verify"], cwd=copy, check=True)
    return copy


def test_reset_backs_up_the_learner_file_first(repo_copy: Path, data_dir: Path) -> None:
    stub_path = repo_copy / "katas" / "layernorm.py"
    stub = stub_path.read_text()
    stub_path.write_text("# my half-finished LayerNorm\n")
    run = cli("reset", "layernorm", cwd=repo_copy)
    assert run.returncode == 0, run.stderr
    backups = list((data_dir / "backups").glob("*/layernorm.py"))
    assert [b.read_text() for b in backups] == ["# my half-finished LayerNorm\n"]
    assert str(backups[0]) in run.stdout
    assert stub_path.read_text() == stub
    assert "already the untouched stub" in cli("reset", "layernorm", cwd=repo_copy).stdout


def test_reset_finds_the_stub_even_after_the_learner_commits(repo_copy: Path) -> None:
    stub_path = repo_copy / "katas" / "rmsnorm.py"
    stub = stub_path.read_text()
    stub_path.write_text("class RMSNorm: pass  # my attempt\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "commit", "-qam", "my attempt", "--no-verify"], cwd=repo_copy, check=True)
    assert cli("reset", "--all", cwd=repo_copy).returncode == 0
    assert stub_path.read_text() == stub


def test_solution_peek_is_recorded() -> None:
    run = cli("solution", "dropout")
    assert "class Dropout" in run.stdout
    assert [e.mode for e in history.events("dropout")] == ["peek"]


# -- the mock interview, in a pseudo-terminal ---------------------------------------------


def spawn_mock(*args: str) -> pexpect.spawn:
    child = pexpect.spawn(
        sys.executable, ["-m", "grader", "mock", *args], cwd=str(registry.ROOT),
        env=dict(os.environ), encoding="utf-8", timeout=90, dimensions=(50, 140),
    )  # fmt: skip
    child.expect(r"implement the classes in\s+(\S+\.py)")
    return child


def answer_follow_ups(child: pexpect.spawn, kata: registry.Kata) -> None:
    for i, _ in enumerate(mock.follow_ups(kata), 1):
        child.expect(f"Q{i}\\.")
        child.expect("Enter shows a model answer")
        child.sendline("")
        child.expect(f"A{i}\\.")


def test_mock_interview_solved_end_to_end() -> None:
    kata = registry.get("dropout")
    child = spawn_mock("--kata", "dropout", "--minutes", "5")
    scratch = Path(child.match.group(1))
    assert registry.ROOT / "katas" not in scratch.parents
    assert (
        scratch.read_text() == kata.stub.read_text() or "NotImplementedError" in scratch.read_text()
    )
    child.expect(r"4:5\d left  ·  0 gradings")  # the countdown runs
    child.sendline("")  # Enter grades the untouched stub
    child.expect("Not started yet")
    child.expect(r"0/\d+ checks passed")
    time.sleep(1.1)  # a visibly newer mtime on every filesystem
    shutil.copyfile(kata.solution, scratch)  # saving the file regrades it
    child.expect("All checks pass")
    child.expect("Scorecard")
    child.expect("solved ✓")
    child.expect(r"Gradings\s+2")
    answer_follow_ups(child, kata)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    events = history.events("dropout")
    assert [e.mode for e in events] == ["mock", "mock"] and events[-1].solved
    assert len({e.mock_id for e in events}) == 1 and events[-1].budget == 300
    assert "0:" in cli("progress").stdout.split("dropout", 1)[1].splitlines()[0]


def test_mock_interview_time_up_and_stop() -> None:
    child = spawn_mock("--kata", "rmsnorm", "--minutes", "0.05")
    child.expect("Final grading")
    child.expect("Scorecard")
    child.expect("not solved")
    child.expect("time is up")
    answer_follow_ups(child, registry.get("rmsnorm"))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0  # an unsolved mock still ends normally, with its scorecard

    child = spawn_mock("--kata", "layernorm", "--minutes", "5")
    child.expect("left")
    child.sendline("q")
    child.expect("you stopped")
    child.sendcontrol("c")  # Ctrl-C during the follow-ups ends quietly too
    child.expect(pexpect.EOF)
    assert "Traceback" not in (child.before or "")
