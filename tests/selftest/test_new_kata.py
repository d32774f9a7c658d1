"""Self-tests for `nox -s new-kata -- NAME` (norm_katas/authoring/new_kata.py): the skeleton it
writes, in a copy of the repository, passes every self-test of its kata, and a name that cannot
be a new kata is refused before anything is written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from norm_katas.content import registry

NAME = "scale-shift"


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns(".git", ".nox", "__pycache__", "*.pyc")
    shutil.copytree(registry.ROOT, copy, ignore=ignore)
    return copy


def run(copy: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    # Not this run's pytest settings: the copy's self-tests run as a fresh `pytest` would.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=copy, capture_output=True, text=True, env=env,
        timeout=timeout,
    )  # fmt: skip


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["Scale_Shift"], "'Scale_Shift' cannot name a kata: use lowercase letters"),
        (["2d-norm"], "starting with a letter"),
        (["layernorm"], "there is a kata named 'layernorm' already"),
        (["prepost-norm"], "there is a kata named 'prepost-norm' already"),
        (["broken"], "would overwrite what exists: tests/catalogue/broken"),
        ([], "usage: nox -s new-kata -- NAME"),
        (["a", "b"], "usage: nox -s new-kata -- NAME"),
    ],
)
def test_a_name_that_cannot_be_a_new_kata_is_refused(
    repo_copy: Path, args: list[str], says: str
) -> None:
    before = snapshot(repo_copy)
    done = run(repo_copy, "norm_katas", "new-kata", *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert snapshot(repo_copy) == before, "a refused name wrote files"


def test_a_new_kata_passes_its_self_tests(repo_copy: Path, request: pytest.FixtureRequest) -> None:
    done = run(repo_copy, "norm_katas", "new-kata", NAME)
    assert done.returncode == 0, done.stdout + done.stderr
    stem = NAME.replace("-", "_")
    for made in ["katas", "stubs", "solutions"]:
        assert (repo_copy / made / f"{stem}.py").is_file(), made
    assert (repo_copy / "tests" / f"test_{stem}.py").is_file()
    assert (repo_copy / "followups" / f"{stem}.toml").is_file()
    assert any((repo_copy / "tests" / "catalogue" / stem).glob("ok_*.py"))
    assert f'name = "{NAME}"' in (repo_copy / "katas.toml").read_text()
    assert f"`kata-{NAME}`" in (repo_copy / "README.md").read_text()  # its row in the table
    pristine = repo_copy / "stubs" / "notebooks" / f"{stem}.ipynb"
    assert (repo_copy / "notebooks" / f"{stem}.ipynb").read_text() == pristine.read_text()
    # Every self-test of the new kata, the README's table included, in the copy.
    device = str(request.config.getoption("device"))
    selection = f"{NAME} or readme_kata_table or notebooks_match"
    tests = run(
        repo_copy, "pytest", "tests/selftest", "-n", "0", "-q", "-p", "no:cacheprovider",
        "-k", selection, "--device", device, "--ignore", "tests/selftest/test_new_kata.py",
        timeout=600,
    )  # fmt: skip
    output = tests.stdout + tests.stderr
    assert tests.returncode == 0, output
    passed = re.search(r"(\d+) passed", output)
    # The reference, the stub, each catalogue file, the catalogue rule, hints, follow-ups...
    assert passed and int(passed[1]) >= 15 and "failed" not in output, output
    again = run(repo_copy, "norm_katas", "new-kata", NAME)  # the kata exists now
    assert again.returncode == 2 and f"a kata named {NAME!r} already" in again.stderr
