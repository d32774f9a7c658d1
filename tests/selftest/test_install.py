"""Self-tests for norm-katas installed with pip, away from any clone: the wheel carries the kata
content, `norm-katas` lists and grades, and `norm-katas init DIR` makes a workspace whose files
are the ones graded, reset and never overwritten.

One virtual environment for the module, outside the clone. It borrows torch, numpy and pytest
from the Python running these tests (a .pth file), so nothing large is downloaded; only the
build backend, hatchling, comes from the package index.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from norm_katas.grader import registry

pytestmark = pytest.mark.skipif(
    os.name == "nt", reason="the venv layout below is POSIX's (bin/); Windows installs alike"
)
PIP = ["-m", "pip", "--disable-pip-version-check", "install", "-q"]


def _run(command: list[str | Path], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


class Installed:
    def __init__(self, bin_dir: Path, home: Path, env: dict[str, str]) -> None:
        self.bin, self.home, self.env = bin_dir, home, env

    def __call__(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """`norm-katas ARGS` as a learner types it, by default in a folder of no clone."""
        return _run([self.bin / "norm-katas", *args], cwd or self.home, self.env)


@pytest.fixture(scope="module")
def norm_katas(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("pip-install")
    home = base / "home"
    home.mkdir()
    # Nothing of the clone or of the caller's settings may leak in: the copy must stand alone.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NORM_KATAS_", "PYTHON"))}
    env["NORM_KATAS_DATA"] = str(base / "data")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    site = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], base, env)
    borrowed = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    Path(site.stdout.strip(), "_norm_katas_borrowed.pth").write_text("\n".join(borrowed) + "\n")
    backend = _run([python, *PIP, "hatchling>=1.19"], base, env)
    if backend.returncode:
        last = (backend.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"the build backend, hatchling, cannot be installed here: pip says {last}")
    done = _run([python, *PIP, "--no-deps", "--no-build-isolation", registry.ROOT], base, env)
    assert done.returncode == 0, done.stdout + done.stderr
    where = _run([python, "-c", "import norm_katas; print(norm_katas.__file__)"], home, env)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    return Installed(venv / "bin", home, env)


def test_lists_every_kata_away_from_the_clone(norm_katas: Installed) -> None:
    done = norm_katas("list")
    assert done.returncode == 0, done.stderr
    for kata in registry.load():
        assert kata.name in done.stdout and kata.title in done.stdout, kata.name
    usage = norm_katas("--help")
    assert usage.returncode == 0 and "norm-katas init" in usage.stdout
    assert "python -m norm_katas" not in usage.stdout  # named as the learner typed it


def test_grades_a_correct_file_with_the_content_it_ships(norm_katas: Installed) -> None:
    mine = norm_katas.home / "my_layernorm.py"
    mine.write_text(registry.get("layernorm").solution.read_text())
    done = norm_katas("grade", "layernorm", "--impl", mine.name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ solved" in done.stdout
    solution = norm_katas("solution", "layernorm")
    assert solution.returncode == 0 and "class LayerNorm" in solution.stdout, solution.stderr


def test_suggests_commands_the_learner_can_type(norm_katas: Installed) -> None:
    """Installed, the report and the practice commands name norm-katas, never nox's sessions."""
    wrong = registry.ROOT / "tests" / "catalogue" / "layernorm" / "eps_outside_sqrt.py"
    done = norm_katas("grade", "layernorm", "--impl", str(wrong))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Grade again with --hints" in done.stdout and "-- --" not in done.stdout
    progress = norm_katas("progress")
    assert "norm-katas progress --history" in progress.stdout, progress.stdout
    assert "nox -s" not in progress.stdout + norm_katas("reset").stderr


def test_outside_a_workspace_says_how_to_make_one(norm_katas: Installed) -> None:
    done = norm_katas("grade", "layernorm")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "norm-katas init" in done.stderr


def test_init_makes_a_workspace_of_stubs_that_grades_and_keeps_your_files(
    norm_katas: Installed,
) -> None:
    workspace = norm_katas.home / "practice"
    done = norm_katas("init", workspace.name)
    assert done.returncode == 0, done.stderr
    for kata in registry.load():
        assert (workspace / kata.file).read_text() == kata.pristine.read_text(), kata.file
    assert (workspace / registry.MARKER).is_file()

    graded = norm_katas("grade", "layernorm", cwd=workspace)
    assert graded.returncode == 1, graded.stdout + graded.stderr
    assert "Not started yet?" in graded.stdout

    # A learner's file is theirs: init again keeps it, and says so; reset backs it up first.
    mine = workspace / "layernorm.py"
    mine.write_text("# my attempt\n")
    again = norm_katas("init", str(workspace))
    assert again.returncode == 0 and "kept" in again.stdout and "layernorm.py" in again.stdout
    assert mine.read_text() == "# my attempt\n"
    below = workspace / "notes"
    below.mkdir()
    reset = norm_katas("reset", "layernorm", cwd=below)  # found from a folder below, too
    assert reset.returncode == 0, reset.stderr
    assert "is the stub again" in reset.stdout
    assert mine.read_text() == registry.get("layernorm").pristine.read_text()
