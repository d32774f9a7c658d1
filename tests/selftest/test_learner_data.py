"""Self-test: the repository's checks leave a learner's work alone.

A clone of this repository where the learner has written a solution into every kata file and
every notebook (with an import ruff rejects, and a name it cannot resolve), and NORM_KATAS_DATA
points at a history that already holds attempts, as the README offers: `nox -s lint`, `nox -s
tests` (a selection that grades through the doors, records history and runs a notebook in a
kernel), `notebooks --write` and `stubs --record` must pass there and leave the kata files, the
notebooks and the history byte for byte as they were.

nox runs with the Python that runs it for `nox -s tests` (NORM_KATAS_NOX), and grades with this
grading environment, so nothing is built or downloaded: where either is not so, it skips.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from norm_katas.content import pristine, registry
from norm_katas.practice import history

ROOT = registry.ROOT
NOX = os.environ.get("NORM_KATAS_NOX")  # the Python that runs nox: `nox -s tests` sets it
# Self-tests that grade through a door, write a history, and run a notebook in a kernel; never
# this module's own end-to-end test, which would run itself again.
SELECTION = (
    "a_door_grading_records_in_a_throwaway_history or a_generated_notebook_in_a_kernel "
    "or notebooks_match or solution_peek_is_recorded"
)
# What a learner leaves in a file: an unused import (ruff's F401) and a helper still to write
# (F821). The repository's lint must not read it.
LEARNER = "\nimport os\n\n\ndef _later():\n    return learners_own_helper()\n"


def test_a_door_grading_records_in_a_throwaway_history() -> None:
    """A self-test's grading through a door is recorded in the self-tests' own throwaway
    history, whatever NORM_KATAS_DATA said when they started."""
    data = Path(os.environ["NORM_KATAS_DATA"])
    assert data.name.startswith("norm-katas-selftest-"), data
    assert data.resolve().is_relative_to(Path(tempfile.gettempdir()).resolve()), data
    kata = registry.get("dropout")
    mine = kata.catalogue / "ok_rand_like_compare.py"  # a learner's solution (the reference's
    run = subprocess.run(  # gradings are not recorded)
        [sys.executable, "-m", "norm_katas", "grade", kata.name, "--impl", str(mine)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert [e.solved for e in history.events(kata.name)][-1:] == [True]


def snapshot(*folders: Path) -> dict[str, str]:
    """Every file under `folders` -> the sha256 of its bytes."""
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for folder in folders
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _noxfile_constant(name: str) -> object:
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
            return ast.literal_eval(node.value)
    raise LookupError(name)


def _grading_env_reused(nox_python: str) -> str | None:
    """Why `nox -s tests` with NORM_KATAS_ENV=sys.prefix would build or install something
    (None: it reuses this environment as it is)."""
    stamp = Path(sys.prefix) / "norm-katas-stamp.json"
    if not stamp.is_file():
        return f"{sys.prefix} is no grading environment built by nox (no {stamp.name})"
    have = json.loads(stamp.read_text())
    version = subprocess.run(
        [nox_python, "-c", "import sys; print(sys.version)"], capture_output=True, text=True
    ).stdout.strip()
    extras = {r for kata in registry.load() for r in kata.requires}
    extras |= set(_noxfile_constant("TEST_EXTRAS"))  # type: ignore[arg-type]
    if have.get("python") != version or have.get("deps") != _noxfile_constant("DEPS"):
        return f"the grading environment {sys.prefix} was built for another nox or DEPS"
    if missing := extras - set(have.get("extras", [])):
        return f"the grading environment {sys.prefix} lacks {', '.join(sorted(missing))}"
    return None


def _learners_clone(tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    done = subprocess.run(
        ["git", "clone", "-q", str(ROOT), str(clone)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    for kata in registry.load():
        solution = kata.solution.read_text(encoding="utf-8")
        (clone / "katas" / kata.file).write_text(solution + LEARNER, encoding="utf-8")
        if kata.tests_solution.exists():  # the learner's tests of the layer, half-written too
            tests = kata.tests_solution.read_text(encoding="utf-8")
            (clone / "katas" / kata.tests_file).write_text(tests + LEARNER, encoding="utf-8")
        mine = clone / registry.notebook(kata)
        nb = json.loads(mine.read_text(encoding="utf-8"))
        (cell,) = [c for c in nb["cells"] if c.get("id") == "kata"]
        cell["source"] = f"%%kata {kata.name}\n{solution}{LEARNER}".splitlines(keepends=True)
        cell["execution_count"] = 3  # as Jupyter saves a cell that ran
        # and a cell of their own that tries the class the %%kata cell defined (ruff: F821)
        source = f"import os\n\nprint({kata.name!r}, Mine)\n"
        tries = {"cell_type": "code", "id": "mine", "metadata": {}, "source": [source]}
        tries |= {"execution_count": 4, "outputs": []}
        nb["cells"].insert(nb["cells"].index(cell) + 1, tries)
        mine.write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")
    return clone


def _seeded_history(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:
        m.setenv("NORM_KATAS_DATA", str(data))
        history.record("layernorm", "practice", 9, 17, ["test_biased_variance"])
        history.record("layernorm", "practice", 17, 17, [], parity_passed=3, parity_total=5)
        history.record("rmsnorm", "notebook", 4, 12, ["test_eps_inside_sqrt"])
        history.record("dropout", "peek")
    assert history.db_path().parent != data  # the seeded one is not this run's


def test_repository_checks_leave_the_learners_work_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    if NOX is None:
        pytest.skip("needs nox: `nox -s tests` names the Python that runs it (NORM_KATAS_NOX)")
    if subprocess.run([NOX, "-c", "import nox"], capture_output=True).returncode:
        pytest.skip(f"NORM_KATAS_NOX={NOX} cannot import nox")
    if subprocess.run(["git", "--version"], capture_output=True).returncode:
        pytest.skip("needs git, to clone the repository")
    if why := _grading_env_reused(NOX):
        pytest.skip(f"{why}: nox would build one (run this under `nox -s tests`)")
    clone = _learners_clone(tmp_path)
    data = tmp_path / "my-history"
    _seeded_history(data, monkeypatch)
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith("PYTEST_") and k not in ("NORM_KATAS_TORCH", "NORM_KATAS_TORCH_INDEX")
    }  # fmt: skip
    env |= {"NORM_KATAS_DATA": str(data), "NORM_KATAS_ENV": sys.prefix}
    mine = (clone / "katas", clone / pristine.NOTEBOOKS, data)
    before = snapshot(*mine)
    assert len(before) >= 2 * len(registry.load()) + 1, before

    def run(*command: str) -> str:
        done = subprocess.run(
            command, cwd=clone, env=env, capture_output=True, text=True, timeout=900
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"{' '.join(command)}:\n{output[-6000:]}"
        return output

    # The lint environment of this checkout, when there is one, so that ruff is not installed.
    envdir = ["--envdir", str(ROOT / ".nox")] if (ROOT / ".nox" / "lint").is_dir() else []
    run(NOX, "-m", "nox", *envdir, "-s", "lint")
    device = str(request.config.getoption("device"))
    selected = run(
        NOX, "-m", "nox", "-s", "tests", "--",
        "-k", SELECTION, "-n", "0", "--device", device,
    )  # fmt: skip
    passed = re.search(r"(\d+) passed", selected)
    assert passed and int(passed[1]) >= 4 and "skipped" not in selected, selected[-6000:]
    assert "Building the grading environment" not in selected
    run(sys.executable, "-m", "norm_katas", "notebooks", "--write")
    run(sys.executable, "-m", "norm_katas", "stubs", "--record")

    after = snapshot(*mine)
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    assert not changed, f"a repository check rewrote the learner's {changed}"
    assert before.keys() == after.keys(), sorted(before.keys() ^ after.keys())
