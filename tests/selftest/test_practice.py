"""Self-tests for practice: history, progress, hints, reset, solution peeks, watch mode and the
mock interview, the last two driven end to end in a pseudo-terminal as a learner would."""

from __future__ import annotations

import ast
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from norm_katas.authoring import notebook_writer
from norm_katas.content import candidates, pristine, registry
from norm_katas.engine.report import FAIL, Check, Outcome, Report
from norm_katas.practice import history, mock, progress, workspace

pexpect = pytest.importorskip("pexpect")  # not on every machine: the pty tests need it

KATAS = registry.load()


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own history and backups, never the user's."""
    path = tmp_path / "data"
    monkeypatch.setenv("NORM_KATAS_DATA", str(path))
    # In-process, the practice commands speak as nox runs them in a clone (nox -s progress).
    monkeypatch.setenv("NORM_KATAS_INVOKED_FROM", str(registry.ROOT))
    return path


def cli(*args: str, cwd: Path = registry.ROOT) -> subprocess.CompletedProcess[str]:
    """`python -m norm_katas ARGS` as typed in a clone, not through nox."""
    env = {k: v for k, v in os.environ.items() if k != "NORM_KATAS_INVOKED_FROM"}
    return subprocess.run(
        [sys.executable, "-m", "norm_katas", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


# -- history ------------------------------------------------------------------------------


def test_history_round_trip() -> None:
    history.record("layernorm", "practice", 3, 20, ["test_eps_inside_sqrt"])
    history.record(
        "layernorm", "mock", 20, 20, ["test_no_bias"], seconds=61.5, budget=900, mock_id="m1",
        parity_passed=3, parity_total=4,
    )  # fmt: skip
    events = history.events("layernorm")
    assert [e.mode for e in events] == ["practice", "mock"]
    assert events[0].failed == ["test_eps_inside_sqrt"] and not events[0].solved
    assert events[1].solved and events[1].seconds == 61.5 and events[1].mock_id == "m1"
    assert (events[1].parity_passed, events[1].parity_total) == (3, 4)
    assert not events[1].parity_solved


def test_history_of_the_first_release_gains_the_tier_columns(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    with sqlite3.connect(history.db_path()) as conn:  # the schema before torch parity existed
        conn.executescript(
            "CREATE TABLE events (id INTEGER PRIMARY KEY, at TEXT NOT NULL, kata TEXT NOT NULL,"
            " mode TEXT NOT NULL, passed INTEGER, total INTEGER, failed TEXT NOT NULL DEFAULT"
            " '[]', seconds REAL, budget REAL, mock_id TEXT);"
            "INSERT INTO events (at, kata, mode, passed, total) VALUES"
            " ('2026-01-01T00:00:00+00:00', 'dropout', 'practice', 20, 20);"
        )
    history.record("dropout", "practice", 18, 18, [], parity_passed=2, parity_total=3)
    history.record("dropout", "practice", 1, 18, ["test_x"], headline="test_x", attempt=False)
    old, new, stub = history.events("dropout")
    assert old.solved and old.parity_total is None
    assert old.headline is None and old.attempt  # an older row counts as it always did
    assert new.solved and (new.parity_passed, new.parity_total) == (2, 3)
    assert stub.headline == "test_x" and not stub.attempt


def test_history_before_notebooks_accepts_their_gradings(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    with sqlite3.connect(history.db_path()) as conn:  # modes checked, before "notebook" was one
        conn.executescript(
            "CREATE TABLE events (id INTEGER PRIMARY KEY, at TEXT NOT NULL, kata TEXT NOT NULL,"
            " mode TEXT NOT NULL CHECK (mode IN ('practice', 'mock', 'peek')), passed INTEGER,"
            " total INTEGER, failed TEXT NOT NULL DEFAULT '[]', seconds REAL, budget REAL,"
            " mock_id TEXT);"
            "CREATE INDEX events_kata ON events (kata, at);"
            "INSERT INTO events (at, kata, mode, passed, total) VALUES"
            " ('2026-01-01T00:00:00+00:00', 'dropout', 'practice', 3, 20);"
        )
    history.record("dropout", "notebook", 20, 20, [], parity_passed=2, parity_total=3)
    history.record("dropout", "notebook", 20, 20, [], parity_passed=3, parity_total=3)
    assert [(e.mode, e.passed) for e in history.events("dropout")] == [
        ("practice", 3), ("notebook", 20), ("notebook", 20),
    ]  # fmt: skip
    with pytest.raises(sqlite3.IntegrityError):  # the constraint is kept, with the new mode
        history.record("dropout", "guess")
    (mine,) = [p for p in progress.collect() if p.kata.name == "dropout"]
    assert mine.solved and mine.attempts == 3 and mine.best_parity == (3, 3)
    assert _integrity(history.db_path()) == "ok"


WRITER = """
import sys
from norm_katas.practice import history
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


def test_gradings_are_recorded_but_not_the_reference_solution(
    grade, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Through the door once, in a process of its own: the attempt is recorded.
    wrong = registry.ROOT / "tests" / "catalogue" / "layernorm" / "eps_outside_sqrt.py"
    run = cli("grade", "layernorm", "--impl", str(wrong))
    assert run.returncode == 1 and "eps is added to the variance" in run.stdout
    assert "Hint (" not in run.stdout  # hints only when asked, with the option as typed here:
    assert "Grade again with --hints" in run.stdout  # after python -m norm_katas, not nox's --
    [first] = history.events()
    assert first.mode == "practice" and first.kata == "layernorm"
    assert "test_eps_inside_sqrt" in first.failed and 0 < first.passed < first.total

    # What else is recorded, decided where every door records (practice.grading.grade), on the
    # warm grader's real reports: the reference is not an attempt, nor a selection of checks.
    from norm_katas.engine import runner
    from norm_katas.engine.request import Request
    from norm_katas.practice import grading

    def recorded(kata: str, impl: Path | str, *options: str) -> None:
        report, _, code = grade(kata, impl, *options)
        graded = runner.Graded(code, Report.from_json(report))
        monkeypatch.setattr(runner, "grade", lambda *args, **kwargs: graded)
        grading.grade(Request.parse(registry.get(kata), ["--impl", str(impl), *options]))

    recorded("layernorm", "solutions")
    parity_only = registry.ROOT / "tests" / "catalogue" / "dropout" / "wrong_error_message.py"
    recorded("dropout", parity_only)
    recorded("layernorm", wrong, "-k", "eps")
    _, second = history.events()
    assert second.kata == "dropout" and second.solved
    assert second.parity_passed < second.parity_total and "test_invalid_p_raises" in second.failed


# -- progress -----------------------------------------------------------------------------


def test_progress_table_and_next_kata() -> None:
    history.record("layernorm", "practice", 19, 20, ["test_numerically_stable"])
    history.record(
        "layernorm", "mock", 20, 20, ["test_no_bias"], seconds=600, budget=900, mock_id="a",
        parity_passed=3, parity_total=4,
    )  # fmt: skip
    for passed in (10, 12):
        history.record(
            "batchnorm", "practice", passed, 25, ["test_running_var_unbiased"],
            headline="test_running_var_unbiased",
        )  # fmt: skip
    history.record("rmsnorm", "peek")
    text = cli("progress").stdout
    rows = {line.split()[0]: line for line in text.splitlines() if line.split()}
    assert "yes" in rows["layernorm"] and "10:00 / 15:00" in rows["layernorm"]
    assert " 3/4 " in rows["layernorm"]  # the best torch-parity score of a solved grading
    assert " no " in rows["batchnorm"] and "1 peek" in rows["rmsnorm"]
    # The checks failed most often, in the words the learner reads in the checklist.
    assert (
        "batchnorm: running_var is updated with the unbiased batch variance (divide by m - 1) "
        "(failed 2×)" in text
    )
    assert "test_running_var_unbiased" not in text
    # Next is the first of today's plan: nothing is due before tomorrow (a failure today, a
    # peek, a mock in time), so the easiest kata never tried (test_today.py has the schedule).
    assert "Next: dropout" in text and "easy, never tried" in text
    assert rows["batchnorm"].endswith(", tomorrow") and rows["dropout"].endswith(" -")


def graded(kata: str, passed: int, failed: list[str] | tuple[str, ...], **fields) -> Report:
    """A report as the grader hands it over: `failed` (the first is the headline), then
    `passed` core checks that pass."""
    checks = [Check(n, n, [], outcome=Outcome.FAILED, kind=FAIL) for n in failed]
    checks += [Check(f"test_ok_{i}", "", [], outcome=Outcome.PASSED) for i in range(passed)]
    return Report(kata, kata, f"katas/{kata}.py", "cpu", checks, **{"is_stub": False, **fields})


def test_progress_counts_a_mistake_at_its_headline_and_only_real_attempts() -> None:
    # One mistake (eps outside the sqrt) fails three checks each time: it counts at its headline.
    for _ in range(3):
        mistake = ("test_eps_inside_sqrt", "test_no_bias", "test_matches_torch")
        history.record_report(graded("layernorm", 14, mistake), "practice")
    # The untouched stub, and a file that did not load, are no attempts.
    stub = ["test_parameters", *(f"test_{i}" for i in range(16))]
    history.record_report(graded("layernorm", 0, stub, is_stub=True), "practice")
    unloaded = graded("rmsnorm", 0, [f"test_{i}" for i in range(17)], load_error="SyntaxError")
    history.record_report(unloaded, "practice")
    text = cli("progress").stdout
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.split()}
    assert rows["layernorm"][1] == "3" and rows["rmsnorm"][1] == "0", text
    title = "eps is added to the variance, inside the square root, as given (0.0 too)"
    assert f"layernorm: {title} (failed 3×)" in text, text
    assert "(failed" not in text.replace("(failed 3×)", ""), text  # not the checks beside it
    assert "python -m norm_katas progress --history" in text  # as typed
    listed = cli("progress", "--history").stdout.splitlines()
    assert len(listed) == 3 and all("✗ eps is added to the variance" in line for line in listed)
    assert "core 14/17" in listed[0] and "layernorm" in listed[0], listed
    assert cli("progress", "--history", "rmsnorm").stdout.strip() == "No attempts yet at rmsnorm."
    assert "1 earlier" in cli("progress", "--history", "--limit", "2").stdout


def test_history_marks_an_attempt_that_solved_the_core_as_solved() -> None:
    """Solved is the interview core passing: a parity headline left is the stretch, not a ✗."""
    history.record(
        "layernorm", "practice", 17, 17, ["test_no_bias"], parity_passed=5, parity_total=6,
        headline="test_no_bias",
    )  # fmt: skip
    history.record("layernorm", "practice", 16, 17, ["test_no_bias"], headline="test_no_bias")
    solved, failed = progress.attempts("layernorm").splitlines()
    assert "✗" not in solved and "✓ solved; torch parity (stretch): bias=False" in solved, solved
    assert "✗ bias=False: a weight but no bias parameter" in failed, failed


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


# A statistic's formula hint written as the tensor call that computes it hands over the line:
# a reduction method (x.var(...)), a dim, keepdim or bias-correction argument, or a Triton call.
CODE_LINE = re.compile(
    r"\.(mean|var|std|sum|square|pow|sqrt|rsqrt|var_mean)\(|\b(dim|keepdim|unbiased|correction)="
    r"|\btl\.\w+\("
)


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_formula_hints_are_maths_not_the_code_line(kata: registry.Kata) -> None:
    for node in ast.parse(kata.suite.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            paragraphs = [p for p in (ast.get_docstring(node) or "").split("\n\n") if p.strip()]
            for hint in paragraphs[2:3]:  # the formula step (--hints 2)
                code = CODE_LINE.search(hint)
                assert code is None, f"{node.name}: a hint holds code ({code[0]}): {hint}"


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_every_kata_has_follow_up_questions(kata: registry.Kata) -> None:
    questions = mock.follow_ups(kata)
    assert 2 <= len(questions) <= 4
    assert all(q.endswith("?") and len(a) > 80 for q, a in questions)


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_stub_docstring_puts_the_core_contract_before_the_stretch(kata: registry.Kata) -> None:
    text = workspace.pristine_stub(kata)
    core = text.find("The contract (interview core)")
    parity = text.find("Torch parity (stretch)")
    pitfalls = text.find(workspace.PITFALLS)
    assert 0 < core < parity < pitfalls, "sections: core contract, then parity, then pitfalls"
    handed_out, section = workspace.split_pitfalls(text)
    assert workspace.PITFALLS not in handed_out and section.strip()
    assert "The contract (interview core)" in handed_out and "NotImplementedError" in handed_out


def test_hints_come_in_steps(grade) -> None:
    # Without --hints there is none: test_gradings_are_recorded_but_not_the_reference_solution.
    wrong = registry.ROOT / "tests" / "catalogue" / "layernorm" / "eps_outside_sqrt.py"
    _, idea, _ = grade("layernorm", wrong, "--hints")
    assert "Hint (idea)" in idea and "Hint (formula)" not in idea
    _, both, _ = grade("layernorm", wrong, "--hints", "2")
    assert "Hint (idea)" in both and "Hint (formula)" in both


# -- reset and solution -------------------------------------------------------------------


GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]


def fresh_copy(dest: Path) -> Path:
    """This working tree as a learner gets it, without git: the machinery as it is now, and
    katas/ and notebooks/ holding the pristine copies whatever the real ones hold."""
    ignore = shutil.ignore_patterns(".git", ".nox", "__pycache__", "*.pyc", "catalogue")
    shutil.copytree(registry.ROOT, dest, ignore=ignore)
    for kata in KATAS:
        (dest / "katas" / kata.file).write_text(workspace.pristine_stub(kata))
        (dest / registry.notebook(kata)).write_text(notebook_writer.text(kata))
    return dest


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    """A learner's fresh clone: fresh_copy() committed to a new git repository, so a reset
    cannot touch the real katas/ and runs this tree's machinery, uncommitted changes too."""
    copy = fresh_copy(tmp_path / "repo")
    subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
    subprocess.run(["git", "add", "-A"], cwd=copy, check=True)
    subprocess.run([*GIT, "commit", "-qm", "stubs", "--no-verify"], cwd=copy, check=True)
    return copy


def test_reset_backs_up_the_learner_file_first(repo_copy: Path, data_dir: Path) -> None:
    stub_path = repo_copy / "katas" / "layernorm.py"
    stub_path.write_text("# my half-finished LayerNorm\n")
    run = cli("reset", "layernorm", cwd=repo_copy)
    assert run.returncode == 0, run.stderr
    backups = list((data_dir / "backups").glob("*/layernorm.py"))
    assert [b.read_text() for b in backups] == ["# my half-finished LayerNorm\n"]
    assert str(backups[0]) in run.stdout
    assert stub_path.read_text() == workspace.pristine_stub(registry.get("layernorm"))
    assert "already the untouched stub" in cli("reset", "layernorm", cwd=repo_copy).stdout


def test_reset_tests_backs_up_the_learners_tests_first(repo_copy: Path, data_dir: Path) -> None:
    mine = repo_copy / "katas" / "tests" / "test_dyt.py"
    mine.write_text("def test_mine(kata):\n    assert kata\n")
    run = cli("reset", "--all", "--tests", cwd=repo_copy)
    assert run.returncode == 0, run.stderr
    (backup,) = (data_dir / "backups").glob("*-dyt/test_dyt.py")
    assert backup.read_text() == "def test_mine(kata):\n    assert kata\n"
    assert mine.read_text() == registry.get("dyt").tests_pristine.read_text()
    for kata in registry.load():  # --all: every kata that has the mode, which is each
        assert f"test_{kata.stem}.py" in run.stdout, run.stdout
    # A kata without a test stub yet (a new one, before its author writes it) says so.
    (repo_copy / "stubs" / "tests" / "test_groupnorm.py").unlink()
    said = cli("reset", "groupnorm", "--tests", cwd=repo_copy).stdout
    assert "groupnorm has no test-writing mode yet" in said


def test_reset_notebook_backs_up_the_learner_notebook_first(
    repo_copy: Path, data_dir: Path, tmp_path: Path
) -> None:
    kata = registry.get("layernorm")
    mine = repo_copy / registry.notebook(kata)
    work = (
        notebook_writer.text(kata).replace("raise NotImplementedError", "return x  # mine").encode()
    )
    mine.write_bytes(work)
    assert cli("notebooks", cwd=repo_copy).returncode == 0, "a learner's work is no problem"
    run = cli("reset", "layernorm", "--notebook", cwd=repo_copy)
    assert run.returncode == 0, run.stderr
    (backup,) = (data_dir / "backups").glob(f"*-layernorm/{mine.name}")
    assert backup.read_bytes() == work and str(backup) in run.stdout, run.stdout
    assert mine.read_text() == notebook_writer.text(kata)
    assert (repo_copy / "katas" / kata.file).read_text() == workspace.pristine_stub(kata)
    again = cli("reset", "layernorm", "--notebook", cwd=repo_copy)
    assert "notebooks/layernorm.ipynb is already the untouched notebook" in again.stdout
    mine.unlink()
    assert "was missing" in cli("reset", "layernorm", "--notebook", cwd=repo_copy).stdout
    # A clone whose notebooks/ never held the pristine copy would open another notebook.
    other = fresh_copy(tmp_path / "other")
    (other / registry.notebook(kata)).write_bytes(work)
    subprocess.run(["git", "init", "-q"], cwd=other, check=True)
    subprocess.run(["git", "add", "-A"], cwd=other, check=True)
    subprocess.run([*GIT, "commit", "-qm", "work", "--no-verify"], cwd=other, check=True)
    run = cli("notebooks", cwd=other)
    assert run.returncode == 1 and "has never held stubs/notebooks/layernorm" in run.stderr
    assert "nox -s reset -- layernorm --notebook" in run.stderr, run.stderr


# A helper left raising NotImplementedError, as the BatchNorm stub lays out its own: an attempt
# that keeps one looked like the stub to a reset that searched for that line.
HELPER = """

def _check_input_dim(x):
    raise NotImplementedError
"""

HANDED_OUT = """
import sys
from norm_katas.content import registry
from norm_katas.practice import workspace
for name in sys.argv[1:]:
    print(workspace.scratch_copy(registry.get(name)))
"""


def test_committed_attempts_are_never_taken_for_the_stub(repo_copy: Path, data_dir: Path) -> None:
    attempts = {kata.file: kata.solution.read_text() + HELPER for kata in KATAS}
    for file, attempt in attempts.items():
        (repo_copy / "katas" / file).write_text(attempt)
    subprocess.run(
        [*GIT, "commit", "-qam", "my attempts", "--no-verify"], cwd=repo_copy, check=True
    )
    # The mock hands out the stub, as a mock has it, never the learner's solution.
    names = [kata.name for kata in KATAS]
    run = subprocess.run(
        [sys.executable, "-c", HANDED_OUT, *names], cwd=repo_copy, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    for kata, path in zip(KATAS, run.stdout.split(), strict=True):
        stub = workspace.pristine_stub(kata)
        assert Path(path).read_text() == pristine.for_mock(stub), kata.name
    # Reset restores every stub and keeps every attempt in a backup.
    run = cli("reset", "--all", cwd=repo_copy)
    assert run.returncode == 0, run.stderr
    assert "already the untouched stub" not in run.stdout, run.stdout
    for kata in KATAS:
        assert (repo_copy / "katas" / kata.file).read_text() == workspace.pristine_stub(kata)
        (backup,) = (data_dir / "backups").glob(f"*-{kata.name}/{kata.file}")
        assert backup.read_text() == attempts[kata.file]
    run = cli("reset", "batchnorm", cwd=repo_copy)
    assert "katas/batchnorm.py is already the untouched stub" in run.stdout, run.stdout


def test_reset_needs_no_git(tmp_path: Path) -> None:
    copy = fresh_copy(tmp_path / "download")
    mine = copy / "katas" / "dropout.py"
    mine.write_text(registry.get("dropout").solution.read_text() + HELPER)
    assert cli("reset", "dropout", cwd=copy).returncode == 0
    assert mine.read_text() == workspace.pristine_stub(registry.get("dropout"))
    mine.unlink()
    assert "katas/dropout.py was missing" in cli("reset", "dropout", cwd=copy).stdout
    assert mine.read_text() == workspace.pristine_stub(registry.get("dropout"))


def test_a_changed_copy_in_stubs_is_not_trusted(repo_copy: Path, tmp_path: Path) -> None:
    # stubs/ is the tool's: edited by mistake, it no longer matches its recorded hash, and git
    # still has the recorded text; without git, reset refuses and says how to restore it.
    kata = registry.get("rmsnorm")
    mine, theirs = repo_copy / "katas" / kata.file, repo_copy / "stubs" / kata.file
    mine.write_text("# my RMSNorm\n")
    theirs.write_text("# my RMSNorm, in the wrong file\n")
    assert cli("reset", "rmsnorm", cwd=repo_copy).returncode == 0
    assert mine.read_text() == workspace.pristine_stub(kata)
    copy = fresh_copy(tmp_path / "download")
    mine, theirs = copy / "katas" / kata.file, copy / "stubs" / kata.file
    mine.write_text("# my RMSNorm\n")
    theirs.write_text("# my RMSNorm, in the wrong file\n")
    run = cli("reset", "rmsnorm", cwd=copy)
    assert run.returncode == 1 and "git checkout stubs/rmsnorm.py" in run.stderr, run.stderr
    assert mine.read_text() == "# my RMSNorm\n"


def test_solution_peek_is_recorded() -> None:
    run = cli("solution", "dropout")
    assert "class Dropout" in run.stdout
    assert [e.mode for e in history.events("dropout")] == ["peek"]


# -- the mock interview, in a pseudo-terminal ---------------------------------------------


def _sigint_ignored() -> None:
    # As in a job started with & from a script: Ctrl-C must still leave watch mode and the mock.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def spawn(*args: str) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable, ["-m", "norm_katas", *args], cwd=str(registry.ROOT),
        env={**os.environ, "NO_COLOR": "1"}, encoding="utf-8", timeout=300, dimensions=(50, 140),
        preexec_fn=_sigint_ignored,
    )  # fmt: skip


def spawn_mock(*args: str) -> pexpect.spawn:
    child = spawn("mock", *args)
    child.expect(r"implement the classes in\s+(\S+\.py)")
    return child


def save(path: Path, text: str) -> None:
    """Save as an editor may (write aside, then rename over), with an mtime a second newer:
    visibly newer on every filesystem, without waiting for the clock."""
    stamp = max(time.time_ns(), path.stat().st_mtime_ns + 1_000_000_000)
    aside = path.with_name(path.name + ".saving")
    aside.write_text(text)
    os.utime(aside, ns=(stamp, stamp))
    os.replace(aside, path)


def answer_follow_ups(child: pexpect.spawn, kata: registry.Kata, tests: str = "n") -> None:
    """Each follow-up question answered with Enter; then the last one, "How would you test
    it?" (the test-writing mode's round), answered with `tests`."""
    for i, _ in enumerate(mock.follow_ups(kata), 1):
        child.expect(f"Q{i}\\.")
        child.expect("Enter shows a model answer")
        child.sendline("")
        child.expect(f"A{i}\\.")
    if kata.tests_pristine.exists():
        child.expect(r"How would you test it\?.*\(y/N\)")
        child.send(tests)


CATALOGUE = registry.ROOT / "tests" / "catalogue"


def test_watch_mode_grades_your_tests_and_the_hint_key_gives_the_next_step(
    tmp_path: Path,
) -> None:
    kata = registry.get("dyt")
    mine = tmp_path / "tests" / "test_dyt.py"
    mine.parent.mkdir()
    mine.write_text(kata.tests_pristine.read_text())
    child = spawn("grade", "dyt", "--tests", "--watch", "--impl", str(mine))
    child.expect("Not started yet")  # the untouched test stub: nothing of yours to grade
    child.expect("Watching .*test_dyt.py")
    save(mine, (CATALOGUE / "dyt" / "tests" / "shapes_only.py").read_text())
    child.expect(r"Your tests catch \d+ of \d+ interview mistakes; no false alarms")
    child.expect("Stuck\\? Press h for a hint.")
    child.expect("Watching")
    child.send("h")
    child.expect("Hint for the first mistake missed")
    child.expect("Test that ")
    child.expect("Stuck\\? Press h for the next step of the hint.")
    child.expect("Watching")
    child.send("h")
    child.expect("Where it shows: ")
    child.expect("Watching")
    save(mine, kata.tests_solution.read_text())
    child.expect("Solved: your tests catch every interview mistake with no false alarm.")
    child.send("q")
    child.expect("Left watch mode")
    child.expect(pexpect.EOF)
    assert [e.mode for e in history.events("dyt")][-2:] == ["tests", "tests"]


def test_watch_mode_regrades_on_save_and_quits_on_q(tmp_path: Path) -> None:
    kata = registry.get("dropout")
    mine = tmp_path / "dropout.py"
    mine.write_text(workspace.pristine_stub(kata))
    child = spawn("grade", "dropout", "--watch", "--impl", str(mine))
    child.expect("Not started yet")  # the first grading runs at once
    child.expect("Watching .*dropout.py")
    save(mine, (CATALOGUE / "dropout" / "no_scaling.py").read_text())
    child.expect("kept values are scaled by exactly 1 / \\(1 - p\\)")  # the headline
    child.expect(r"Interview core \d+/\d+ ✗")
    # The verdict prints before the grading is over; Enter during a grading is let go.
    child.expect("Watching")
    child.send("\n")  # Enter regrades without a save
    child.expect(r"Interview core \d+/\d+ ✗")
    child.expect("Watching")  # that grading is over: a save now is not one that stops it
    # Stuck: the key it names grades again with the idea, then with the formula as well.
    assert "Stuck? Press h for a hint." in child.before and "--hints" not in child.before
    child.send("h")
    child.expect("Hint \\(idea\\)")
    child.expect("Stuck\\? Press h for the formula as well.")
    child.expect("Watching")
    child.send("h")
    child.expect("Hint \\(formula\\)")
    child.expect("Watching")
    assert "Stuck?" not in child.before  # nothing more to show
    save(mine, kata.solution.read_text())
    child.expect(r"Interview core (\d+)/\1 ✓ solved")
    child.send("q")  # one key, no Enter: the terminal is in cbreak mode
    child.expect("Left watch mode")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    modes = [e.mode for e in history.events("dropout")]
    assert modes == ["practice"] * 6  # every grading is practice in the history
    assert history.events("dropout")[-1].solved


ENDLESS_DROPOUT = """\
from torch import nn


class Dropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        while True:
            pass
"""


def test_watch_mode_a_new_save_stops_a_hanging_grading(tmp_path: Path) -> None:
    kata = registry.get("dropout")
    mine = tmp_path / "dropout.py"
    mine.write_text(workspace.pristine_stub(kata))
    child = spawn("grade", "dropout", "--watch", "--impl", str(mine))
    child.expect("Watching .*dropout.py")
    save(mine, ENDLESS_DROPOUT)
    child.expect(r"·  grading .*dropout\.py")  # the endless loop's grading has begun
    child.expect(r"\n  … (\w[^\r\n]*)")  # the check it is on, while that check runs
    assert child.match.group(1)[:20] in kata.suite.read_text()  # a check's own description
    time.sleep(1)
    save(mine, kata.solution.read_text())  # the fix, while that grading hangs
    # The hanging grading is stopped for the fix: no check of it waits out its time limit.
    assert child.expect(["did not finish in time", "Saved again: this grading was stopped"]) == 1
    child.expect(r"Interview core (\d+)/\1 ✓ solved")
    child.expect("Watching")
    child.send("q")
    child.expect("Left watch mode")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    # The stopped grading has no verdict, so only the stub's and the fix's are recorded.
    events = history.events("dropout")
    assert [e.mode for e in events] == ["practice"] * 2 and events[-1].solved


# Grades once warmed up without a device, then once warmed up as watch mode does (every save
# graded on the CPU), each time with a probe that raises if it runs.
PROVEN_ONCE = """\
import sys
from pathlib import Path
from norm_katas.checks.triton_engine import probe, startup
from norm_katas.content import registry
from norm_katas.engine import runner
from norm_katas.engine.request import Request

kata = registry.get("triton-rmsnorm")
prove = probe.prove


def again(device):
    raise RuntimeError("the engine was proven again")


for i, device in enumerate((None, "cpu")):
    probe.prove = prove
    runner.warm_up([kata], long_lived=True, device=device)
    probe.prove = again
    with Path(sys.argv[1] + str(i)).open("w") as out:
        code = runner.grade(Request.parse(kata, ["--impl", "solutions"]), out=out).code
    print(sorted(startup._PROVEN.items()), code)
"""


def test_watch_mode_proves_the_triton_engine_once_for_every_save(tmp_path: Path) -> None:
    # Proving Triton's interpreter takes a tenth of a triton-rmsnorm grading: watch mode and a
    # mock prove it in the parent, and every grading forked from it inherits the proof (and
    # the faults it found, for their notes). Without a device nothing is proven there, and the
    # grading's own probe (here one that raises: the grader's failure, exit 3) runs.
    out = tmp_path / "out"
    env = {**os.environ, "NORM_KATAS_DATA": str(tmp_path / "data")}
    run = subprocess.run(
        [sys.executable, "-c", PROVEN_ONCE, str(out)], cwd=registry.ROOT, env=env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.stdout.splitlines()[:2] == ["[] 3", "[(True, None)] 0"], run.stdout + run.stderr
    without, warmed = (Path(f"{out}{i}").read_text() for i in range(2))
    assert "the engine was proven again" in without and "not with your code" in without, without
    assert re.search(r"Interview core (\d+)/\1 ✓ solved", warmed), warmed


@pytest.mark.parametrize(
    ("after", "says", "status"),
    [
        ("Watching", "Left watch mode", 0),
        # while torch and the checks load, for seconds: said, never silent
        ("Starting the grader", "Stopped (Ctrl-C) while the grader was starting: nothing was "
         "graded.", 130),
    ],
    ids=["watching", "starting"],
)  # fmt: skip
def test_watch_mode_leaves_cleanly_on_ctrl_c(
    tmp_path: Path, after: str, says: str, status: int
) -> None:
    mine = tmp_path / "layernorm.py"
    mine.write_text(workspace.pristine_stub(registry.get("layernorm")))
    child = spawn("grade", "layernorm", "--watch", "--impl", str(mine))
    child.expect(after)
    child.sendcontrol("c")
    child.expect_exact(says)
    child.expect(pexpect.EOF)
    assert "Traceback" not in (child.before or "")
    child.close()
    assert child.exitstatus == status


def test_ctrl_c_in_an_extensions_start_is_a_ctrl_c(monkeypatch: pytest.MonkeyPatch) -> None:
    # A Ctrl-C that lands while a C extension initialises comes out as a SystemError caused
    # by it: still the learner stopping the start, never "the grader could not start".
    from norm_katas.engine.runner import warm

    def interrupted(name: str) -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:
            raise SystemError(f"initialization of {name} raised unreported exception") from e

    monkeypatch.setattr(warm.importlib, "import_module", interrupted)
    with pytest.raises(KeyboardInterrupt):
        warm.warm_up([registry.get("layernorm")])


def test_a_mock_stopped_before_it_began_says_so(
    warm_up_interrupted: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert mock.run("dropout", 5, None) == 130
    said = capsys.readouterr().out
    assert "Stopped (Ctrl-C) before the mock began: no clock ran, nothing was recorded." in said
    assert history.events("dropout") == []


def test_a_save_the_moment_the_mock_shows_its_file_is_graded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mock watches each file before it prints the path: an editor that saves before the
    mock's next line is still graded (CI once lost that race in the tests round)."""
    kata = registry.get("dyt")
    seen: list[bool] = []

    def shown(*args: object, **kwargs: object) -> None:
        if found := re.search(r"(\S+\.py)", " ".join(map(str, args))):
            save(Path(found.group(1)), "# saved at once\n")

    def watching(watched: object, *args: object) -> str:
        seen.append(watched.saved())  # type: ignore[attr-defined]
        raise KeyboardInterrupt  # q: nothing else runs

    monkeypatch.setattr(mock, "print", shown, raising=False)
    monkeypatch.setattr(mock.runner, "warm_up", lambda *args, **kwargs: None)
    monkeypatch.setattr(mock, "watch", lambda m, keys: watching(m.watched))
    monkeypatch.setattr(mock, "debrief", lambda kata, keys: False)
    monkeypatch.setattr(mock.loop, "run", watching)
    monkeypatch.setattr(mock, "scorecard", lambda m, ended: "")
    mock.run("dyt", 5, None)  # the task file
    with pytest.raises(KeyboardInterrupt):
        mock.tests_round(kata, mock.loop.Keys())  # the tests round's file
    assert seen == [True, True]


def test_mock_interview_solved_end_to_end() -> None:
    kata = registry.get("dropout")
    child = spawn_mock("--kata", "dropout", "--minutes", "5")
    scratch = Path(child.match.group(1))
    assert registry.ROOT / "katas" not in scratch.parents
    handed_out = scratch.read_text()
    assert "NotImplementedError" in handed_out and workspace.PITFALLS not in handed_out
    child.expect(r"4:5\d left  ·  0 gradings")  # the countdown runs
    child.send("\n")  # Enter grades the untouched stub
    child.expect("Not started yet")
    child.expect(r"core 0/\d+")
    child.expect(r"1 grading  ·  core 0/")  # that grading is over: this save does not stop it
    save(scratch, kata.solution.read_text())  # saving the file regrades it
    child.expect("Every check passes")
    child.expect("Scorecard")
    child.expect("solved ✓")
    child.expect(r"Gradings\s+2")
    child.expect(workspace.PITFALLS)  # the answers come after the mock
    answer_follow_ups(child, kata)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    events = history.events("dropout")
    assert [e.mode for e in events] == ["mock", "mock"] and events[-1].solved
    assert len({e.mock_id for e in events}) == 1 and events[-1].budget == 300
    assert "0:" in cli("progress").stdout.split("dropout", 1)[1].splitlines()[0]


def test_mock_asks_how_you_would_test_it_on_a_clock_of_its_own() -> None:
    kata = registry.get("dyt")
    child = spawn_mock("--kata", "dyt", "--minutes", "5")
    save(Path(child.match.group(1)), kata.solution.read_text())
    child.expect("Scorecard")
    answer_follow_ups(child, kata, tests="y")
    child.expect(r"Your tests go in\s+(\S+\.py)")
    mine = Path(child.match.group(1))
    assert mine.read_text() == kata.tests_pristine.read_text()  # a fresh test stub
    child.expect("The clock starts now")
    save(mine, kata.tests_solution.read_text())
    n = sum(c.kind == "mistake" for c in candidates.for_kata(kata))
    child.expect(f"Your tests catch {n} of {n} interview mistakes; no false alarms")
    child.expect(rf"Tests round: {n} of {n} interview mistakes caught, 0 false alarms; \d+:\d\d of")
    child.expect("your tests catch every interview mistake")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert [e.mode for e in history.events("dyt")][-1] == "tests"


def test_mock_solved_by_the_core_offers_torch_parity() -> None:
    child = spawn_mock("--kata", "dropout", "--minutes", "5")
    scratch = Path(child.match.group(1))
    child.expect("left")
    save(scratch, (CATALOGUE / "dropout" / "wrong_error_message.py").read_text())
    child.expect("Interview core solved in")
    child.expect(r"go on for it \(stretch\)\? \[y/N\]")
    child.send("y")
    child.expect("left")  # the clock runs on, now for parity
    save(scratch, registry.get("dropout").solution.read_text())
    child.expect("Every check passes")
    child.expect("Scorecard")
    child.expect("solved ✓")
    child.expect(r"Parity\s+every check passed at")
    child.sendcontrol("c")
    child.expect(pexpect.EOF)
    events = history.events("dropout")
    assert events[0].solved and not events[0].parity_solved and events[-1].parity_solved


def test_mock_interview_time_up_and_stop() -> None:
    child = spawn_mock("--kata", "rmsnorm", "--minutes", "0.02")
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
    child.send("q")  # before the stub was changed: its final grading is no attempt
    child.expect("you stopped")
    child.expect("Q1\\.")
    child.send("q")
    child.expect("This mock left nothing in your history: no attempt of yours was recorded.")
    child.expect(pexpect.EOF)
    assert "Traceback" not in (child.before or "")
    assert not [e for e in history.events("layernorm") if e.attempt]
    assert cli("progress", "--history").stdout.strip() == "No attempts yet."


def test_mock_offers_only_what_works_in_it() -> None:
    child = spawn_mock("--kata", "dropout", "--minutes", "5")
    scratch = Path(child.match.group(1))
    handed_out = scratch.read_text()
    assert "nox -s kata-dropout" not in handed_out  # that grades katas/, not this file
    assert pristine.GRADED_IN_THE_MOCK in handed_out
    child.expect("left")
    save(scratch, (CATALOGUE / "dropout" / "no_scaling.py").read_text())
    child.expect("kept values are scaled by exactly 1 / \\(1 - p\\)")  # the headline
    child.expect(r"Interview core \d+/\d+ ✗")
    assert "other checks fail:" in child.before  # named by title, no option to show them
    child.expect("Mock interview: ")
    # No options to grade again with: none can be passed inside a mock.
    assert "-- --" not in child.before and "Stuck?" not in child.before
    child.send("q")
    child.expect("you stopped")
    child.expect("Q1\\.")
    child.expect("q leaves")
    child.send("q")  # one key, as in the mock: leaves the follow-up questions
    child.expect("This mock is in your history")
    assert "A1." not in child.before
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.parametrize("minutes", ["-5", "0", "nan", "601", "ten"])
def test_mock_minutes_must_be_a_budget(minutes: str) -> None:
    run = cli("mock", "--kata", "dropout", "--minutes", minutes)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "--minutes" in run.stderr and "on the clock" not in run.stdout
    assert not history.events("dropout")  # nothing started, nothing recorded


def test_history_waits_when_another_process_turns_on_its_log() -> None:
    """Two gradings recording into a new history at once: SQLite answers the second one's
    switch to write-ahead logging "database is locked" without waiting; it is retried."""

    class Busy:
        def __init__(self) -> None:
            self.tries = 0

        def execute(self, sql: str) -> None:
            self.tries += 1
            if self.tries < 3:
                raise sqlite3.OperationalError("database is locked")

    conn = Busy()
    history.wal(conn)  # type: ignore[arg-type]
    assert conn.tries == 3


def test_plain_pytest_runs_your_tests_against_your_own_layer(tmp_path: Path) -> None:
    # tests/conftest.py beside the learner's tests (katas/tests/ in a clone, as committed; init
    # writes it in a workspace): `python -m pytest tests/test_<kata>.py` gives each test the
    # learner's own layer as `kata`. The grader's mode leaves it out (--noconftest).
    import subprocess
    import sys

    from norm_katas.practice import workspace

    committed = subprocess.run(
        ["git", "show", "HEAD:katas/tests/conftest.py"], cwd=registry.ROOT, capture_output=True,
        text=True,
    )  # fmt: skip  # the committed copy: a learner's edits to theirs are theirs
    if committed.returncode == 0:
        assert committed.stdout == workspace.CONFTEST, "write workspace.CONFTEST to katas/tests"
    written, _ = workspace.init(tmp_path)
    assert tmp_path / "tests" / "conftest.py" in written
    kata = registry.get("layernorm")
    (tmp_path / "tests" / kata.tests_file.split("/")[-1]).write_text(
        kata.tests_solution.read_text(encoding="utf-8"), encoding="utf-8"
    )

    def pytest_with(layer: Path) -> subprocess.CompletedProcess:
        (tmp_path / kata.file).write_text(layer.read_text(encoding="utf-8"), encoding="utf-8")
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", kata.tests_file],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    done = pytest_with(kata.solution)
    assert done.returncode == 0, done.stdout + done.stderr
    done = pytest_with(kata.catalogue / "eps_outside_sqrt.py")  # a mistake on its own
    assert done.returncode == 1 and "failed" in done.stdout, done.stdout + done.stderr
