"""Self-tests for the pristine stubs (norm_katas/grader/stubs.py): stubs/<file> is the tool's
copy of each untouched stub, recorded by hash in stubs/hashes.txt; the learner's katas/ is never
read for it. The notebooks in notebooks/ hold the stubs too, and are kept in step with them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from norm_katas import notebook, notebooks
from norm_katas.grader import registry, stubs

KATAS = registry.load()


def test_every_stub_is_as_recorded() -> None:
    problems = stubs.problems()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_untouched_is_decided_by_content(kata: registry.Kata) -> None:
    stub = stubs.text(kata)
    assert stubs.untouched(kata, stub)
    assert stubs.untouched(kata, stubs.for_mock(stub))  # as the mock hands it out
    assert stubs.untouched(kata, stubs.for_mock(stub, stubs.GRADED_IN_A_NOTEBOOK_MOCK))
    assert stubs.untouched(kata, stubs.split_pitfalls(stub)[0])  # as the mock handed it out
    assert stubs.untouched(kata, stub.replace("\n", "\r\n"))  # a checkout with CRLF
    assert stubs.untouched(kata, stubs.for_notebook(stub, kata.name))  # as a %%kata cell
    assert not stubs.untouched(kata, stub + "# a note of mine\n")
    # The learner's solution keeping a helper that raises, as the BatchNorm stub lays out.
    attempt = kata.solution.read_text() + "\n\ndef _todo():\n    raise NotImplementedError\n"
    assert not stubs.untouched(kata, attempt)


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_the_mock_copy_says_how_the_mock_grades_it(kata: registry.Kata) -> None:
    handed_out = stubs.for_mock(stubs.text(kata))
    assert stubs.PITFALLS not in handed_out
    assert "nox -s kata-" not in handed_out  # that grades katas/, not the mock's file
    assert stubs.GRADED_IN_THE_MOCK in handed_out
    compile(handed_out, kata.file, "exec")  # still a Python file


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_the_notebook_cell_keeps_the_code_and_says_how_a_cell_is_graded(
    kata: registry.Kata,
) -> None:
    stub = stubs.text(kata)
    cell = stubs.for_notebook(stub, kata.name)
    assert "nox -s kata-" not in cell and f"%%kata {kata.name}" in cell
    code = stub[stub.index('"""', 3) + 3 :]  # everything after the module docstring
    assert cell.endswith(code), "the code below the docstring is the stub's, unchanged"
    compile(cell, kata.file, "exec")


def test_notebooks_match_the_stubs_and_the_registry() -> None:
    """notebooks/ is generated: one notebook per kata, each as its stub and entry make it."""
    assert not notebooks.problems(), "\n".join(notebooks.problems())
    for kata in KATAS:
        nb = json.loads(notebooks.path(kata).read_text(encoding="utf-8"))
        sources = ["".join(cell["source"]) for cell in nb["cells"]]
        assert sources[1].rstrip().endswith("%load_ext norm_katas"), "the first cell loads it"
        assert notebook.cell_text(kata).rstrip("\n") in sources, "the stub's %%kata cell"
        assert "--device cuda" in "".join(sources)


def grader_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "norm_katas", *args], cwd=cwd, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def test_an_edited_stub_fails_until_it_is_recorded(tmp_path: Path) -> None:
    # An author edits stubs/<file>: the check names the command that records it, and that
    # command refreshes katas/<file> where it is still the old stub, never a learner's work.
    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns(".git", ".nox", "__pycache__", "*.pyc", "catalogue")
    shutil.copytree(registry.ROOT, copy, ignore=ignore)
    for kata in KATAS:
        (copy / "katas" / kata.file).write_text(stubs.text(kata))
    (copy / "katas" / "rmsnorm.py").write_text("# my RMSNorm\n")
    for name in ("layernorm.py", "rmsnorm.py"):
        stub = copy / "stubs" / name
        stub.write_text(stub.read_text().replace("The contract", "The whole contract", 1))
    run = grader_cli("stubs", cwd=copy)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "stubs/layernorm.py is not the stub recorded" in run.stderr, run.stderr
    assert stubs.RECORD_COMMAND in run.stderr, run.stderr
    run = grader_cli("stubs", "--record", cwd=copy)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "katas/layernorm.py is the new stub too" in run.stdout, run.stdout
    assert "katas/rmsnorm.py holds other work" in run.stdout, run.stdout
    layernorm = (copy / "stubs" / "layernorm.py").read_text()
    assert (copy / "katas" / "layernorm.py").read_text() == layernorm
    assert (copy / "katas" / "rmsnorm.py").read_text() == "# my RMSNorm\n"
    assert (
        f"{stubs.blob_id(layernorm)}  layernorm.py" in (copy / "stubs" / "hashes.txt").read_text()
    )
    assert grader_cli("stubs", cwd=copy).returncode == 0
