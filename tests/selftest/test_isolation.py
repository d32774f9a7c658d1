"""Self-tests: a grading touches nothing outside itself.

- The learner's code runs in a scratch folder: what it writes by a relative path, at import or
  in forward, in the grading process or on a SyncBatchNorm rank, never lands in the repository
  (graded from a copy of it, so that a grader without this protection breaks only the copy).
- The paths the user gives (--impl, --report-json) are taken from where the user is.
Each grades in a fresh interpreter, forked and spawned (NORM_KATAS_SPAWN) where it matters.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import registry

CATALOGUE = registry.ROOT / "tests" / "catalogue"
WRITER = CATALOGUE / "writes" / "syncbatchnorm_relative_paths.py"
# Checks that load the file in the grading process and on the ranks, and run forward in both.
SELECTION = "parameters or without_process_group or global_mean"
START = {"fork": {}, "spawn": {"NORM_KATAS_SPAWN": "1"}}
# No time limit under test here: the selection's checks get room on a loaded machine.
ROOM = "--timeout=120"


def snapshot(root: Path) -> dict[str, str]:
    """Every file under root (but Python's bytecode caches) -> a hash of its contents."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.mark.parametrize("start", START)
def test_relative_writes_land_in_a_scratch_folder(start: str, tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns(".git", ".nox", "__pycache__", "*.pyc", "catalogue")
    shutil.copytree(registry.ROOT, copy, ignore=ignore)
    mine = copy / WRITER.relative_to(registry.ROOT)  # in the copy's catalogue: it may subclass
    mine.parent.mkdir(parents=True)
    shutil.copyfile(WRITER, mine)
    before = snapshot(copy)
    run = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "syncbatchnorm", "--impl", str(mine),
         "-k", SELECTION, ROOM],
        cwd=copy, capture_output=True, text=True, timeout=600,
        env={**os.environ, **START[start]},
    )  # fmt: skip
    output = run.stdout + run.stderr
    assert run.returncode == 0 and "Interview core 3/3 ✓" in output, output
    after = snapshot(copy)
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    assert not changed, f"the learner's file overwrote {changed} in the repository"
    assert not before.keys() - after.keys(), f"it deleted {sorted(before.keys() - after.keys())}"
    assert not after.keys() - before.keys(), f"it created {sorted(after.keys() - before.keys())}"


def test_paths_given_are_taken_from_where_the_user_is(tmp_path: Path) -> None:
    # The child works in its scratch folder; --impl and --report-json are the user's paths.
    kata = registry.get("layernorm")
    shutil.copyfile(kata.solution, tmp_path / "mine.py")
    run = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "layernorm", "--impl", "mine.py",
         "--report-json", "out.json", ROOM],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(registry.ROOT)},
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "out.json").is_file(), run.stdout + run.stderr
