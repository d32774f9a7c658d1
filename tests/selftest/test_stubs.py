"""Self-tests for the pristine stubs (norm_katas/content/pristine.py): stubs/<file> is the tool's
copy of each untouched stub, recorded by hash in stubs/hashes.txt; the learner's katas/ is never
read for it. The notebooks hold the stubs too: the tool's copies in stubs/notebooks/ are kept in
step with them; the learner's copies in notebooks/ are never rewritten with their work in them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from norm_katas.authoring import notebook_writer, record
from norm_katas.content import pristine, registry
from norm_katas.doors import magics

KATAS = registry.load()


def test_every_stub_is_as_recorded() -> None:
    problems = record.problems()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_untouched_is_decided_by_content(kata: registry.Kata) -> None:
    stub = pristine.text(kata)
    assert pristine.untouched(kata, stub)
    assert pristine.untouched(kata, pristine.for_mock(stub))  # as the mock hands it out
    assert pristine.untouched(kata, pristine.for_mock(stub, pristine.GRADED_IN_A_NOTEBOOK_MOCK))
    assert pristine.untouched(kata, pristine.split_pitfalls(stub)[0])  # as the mock handed it out
    assert pristine.untouched(kata, stub.replace("\n", "\r\n"))  # a checkout with CRLF
    assert pristine.untouched(kata, pristine.for_notebook(stub, kata.name))  # as a %%kata cell
    assert pristine.untouched(kata, pristine.for_workspace(stub, kata.name))  # as norm-katas init
    assert not pristine.untouched(kata, stub + "# a note of mine\n")
    # The learner's solution keeping a helper that raises, as the BatchNorm stub lays out.
    attempt = kata.solution.read_text() + "\n\ndef _todo():\n    raise NotImplementedError\n"
    assert not pristine.untouched(kata, attempt)


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_the_mock_copy_says_how_the_mock_grades_it(kata: registry.Kata) -> None:
    handed_out = pristine.for_mock(pristine.text(kata))
    assert pristine.PITFALLS not in handed_out
    assert "nox -s kata-" not in handed_out  # that grades katas/, not the mock's file
    assert pristine.GRADED_IN_THE_MOCK in handed_out
    compile(handed_out, kata.file, "exec")  # still a Python file


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_the_notebook_cell_keeps_the_code_and_says_how_a_cell_is_graded(
    kata: registry.Kata,
) -> None:
    stub = pristine.text(kata)
    cell = pristine.for_notebook(stub, kata.name)
    assert "nox -s kata-" not in cell and f"%%kata {kata.name}" in cell
    code = stub[stub.index('"""', 3) + 3 :]  # everything after the module docstring
    assert cell.endswith(code), "the code below the docstring is the stub's, unchanged"
    compile(cell, kata.file, "exec")


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_an_installed_copy_hands_out_stubs_that_say_norm_katas_grade(
    kata: registry.Kata, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`norm-katas init` and `norm-katas reset` write a stub that names the command installed
    (nox is not there); the stub still counts as untouched, and a reset of it does nothing."""
    from norm_katas.practice import workspace

    monkeypatch.setattr(registry, "INSTALLED", True)
    monkeypatch.setenv(registry.WORKSPACE_ENV, str(tmp_path))
    monkeypatch.setenv("NORM_KATAS_DATA", str(tmp_path / "data"))
    workspace.init(tmp_path)
    text = (tmp_path / kata.file).read_text()
    assert f"Grade yourself with::\n\n    norm-katas grade {kata.name}\n" in text
    assert "nox -s" not in text and pristine.untouched(kata, text)
    assert workspace.reset(registry.get(kata.name)) is None  # already the stub: nothing to do
    (tmp_path / kata.file).write_text(pristine.text(kata))  # the clone's form: reset writes ours
    assert workspace.reset(registry.get(kata.name)) is not None
    assert (tmp_path / kata.file).read_text() == text


def test_notebooks_match_the_stubs_and_the_registry() -> None:
    """stubs/notebooks/ is generated: one notebook per kata, each as its stub and entry make it;
    a fresh clone's notebooks/ holds them (checked in git, never in the learner's files)."""
    assert not notebook_writer.problems(), "\n".join(notebook_writer.problems())
    for kata in KATAS:
        nb = json.loads(kata.pristine_notebook.read_text(encoding="utf-8"))
        sources = ["".join(cell["source"]) for cell in nb["cells"]]
        assert sources[1].rstrip().endswith("%load_ext norm_katas"), "the first cell loads it"
        assert magics.cell_text(kata).rstrip("\n") in sources, "the stub's %%kata cell"
        assert "--device cuda" in "".join(sources)


# What installs from, or opens, the published repository: never a guessed address.
INSTALLS = re.compile(r"git\+https?://[^\s\"')]+|colab\.research\.google\.com/github/[^\s\"')]+")


def test_nothing_installs_from_or_links_to_an_address_not_set() -> None:
    """While the repository's address is unset, no notebook, README or docs line installs from
    or opens any address; once set, only from that one."""
    address = registry.repository()
    docs = sorted((registry.ROOT / "docs").glob("*.md"))
    files = [
        *(kata.notebook for kata in KATAS),
        registry.ROOT / "README.md",
        *docs,
    ]
    for file in files:
        for found in INSTALLS.findall(file.read_text(encoding="utf-8")):
            assert address and address.removeprefix("https://") in found, f"{file}: {found}"


def _setting(monkeypatch: pytest.MonkeyPatch, address: str) -> None:
    """[tool.norm-katas] repository as if pyproject.toml said `address`."""
    read = registry.read_toml

    def with_setting(path: Path) -> dict:
        data = read(path)
        if path.name == "pyproject.toml":
            data.setdefault("tool", {})["norm-katas"] = {"repository": address}
        return data

    monkeypatch.setattr(registry, "read_toml", with_setting)


def test_a_set_address_installs_from_it_and_links_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _setting(monkeypatch, "https://github.com/someone/norm-katas/")
    kata = registry.get("layernorm")
    made = notebook_writer.text(kata)
    assert (
        '%pip install --quiet \\"norm-katas @ git+https://github.com/someone/norm-katas\\"' in made
    )
    colab = "https://colab.research.google.com/github/someone/norm-katas/blob/main/notebooks/"
    assert f"({colab}layernorm.ipynb)" in made and "Open In Colab" in made
    assert f"[Colab]({colab}layernorm.ipynb)" in registry.kata_table()
    assert "ModuleNotFoundError" not in made
    _setting(monkeypatch, "")
    made = notebook_writer.text(kata)
    assert not INSTALLS.findall(made + registry.kata_table()) and "Open In Colab" not in made
    _setting(monkeypatch, "git@github.com:someone/norm-katas.git")
    with pytest.raises(ValueError, match=r"must be https://github.com/OWNER/NAME"):
        registry.repository()


def test_the_setup_cell_says_how_to_install_norm_katas_where_it_is_missing(
    tmp_path: Path,
) -> None:
    """Away from a clone, with no address set, the first cell stops with how to install it."""
    if registry.repository():
        pytest.skip("the repository's address is set: the cell installs from it")
    cell = notebook_writer.setup_cell(registry.get("layernorm"))
    code = "\n".join(line for line in cell.splitlines() if not line.startswith("%"))
    ran = subprocess.run(
        [sys.executable, "-I", "-c", code], cwd=tmp_path, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "ModuleNotFoundError: norm-katas is not installed in this kernel" in ran.stderr
    assert "%pip install /path/to/the/clone" in ran.stderr and "pip wheel" in ran.stderr


def grader_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "norm_katas", *args], cwd=cwd, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def test_writing_the_notebooks_never_replaces_a_learners_notebook(tmp_path: Path) -> None:
    # After a change to katas.toml, `notebooks --write` writes the tool's copies, and a learner's
    # notebook only where it is missing or still the pristine copy; one holding work is left
    # byte for byte as it was, and the command says how to take the new one.
    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns(".git", ".nox", "__pycache__", "*.pyc", "catalogue")
    shutil.copytree(registry.ROOT, copy, ignore=ignore)
    mine = {kata.name: copy / "notebooks" / kata.notebook.name for kata in KATAS}
    for kata in KATAS:
        mine[kata.name].write_text(notebook_writer.text(kata), encoding="utf-8")
    work = notebook_writer.text(KATAS[0]).replace("raise NotImplementedError", "return x  # mine")
    mine[KATAS[0].name].write_bytes(work.replace("\n", "\r\n").encode())  # saved on Windows
    mine[KATAS[1].name].unlink()
    toml = copy / "katas.toml"
    toml.write_text(toml.read_text().replace("minutes = ", "minutes = 1", 3))
    run = grader_cli("notebooks", cwd=copy)
    assert run.returncode == 1 and "stubs/notebooks/" in run.stderr, run.stdout + run.stderr
    run = grader_cli("notebooks", "--write", cwd=copy)
    assert run.returncode == 0, run.stdout + run.stderr
    first, second, third = KATAS[:3]
    assert mine[first.name].read_bytes() == work.replace("\n", "\r\n").encode()
    assert f"left notebooks/{mine[first.name].name} as it is: it holds your work" in run.stdout
    assert f"nox -s reset -- {first.name} --notebook" in run.stdout, run.stdout
    assert f"wrote notebooks/{mine[second.name].name} (it was missing)" in run.stdout
    assert f"wrote notebooks/{mine[third.name].name} (it was untouched)" in run.stdout
    for kata in (second, third):
        tools = copy / pristine.PRISTINE_NOTEBOOKS / kata.pristine_notebook.name
        assert mine[kata.name].read_text() == tools.read_text(), kata.name
    assert grader_cli("notebooks", cwd=copy).returncode == 0


def test_an_edited_stub_fails_until_it_is_recorded(tmp_path: Path) -> None:
    # An author edits stubs/<file>: the check names the command that records it, and that
    # command refreshes katas/<file> where it is still the old stub, never a learner's work.
    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns(".git", ".nox", "__pycache__", "*.pyc", "catalogue")
    shutil.copytree(registry.ROOT, copy, ignore=ignore)
    for kata in KATAS:
        (copy / "katas" / kata.file).write_text(pristine.text(kata))
    (copy / "katas" / "rmsnorm.py").write_text("# my RMSNorm\n")
    for name in ("layernorm.py", "rmsnorm.py"):
        stub = copy / "stubs" / name
        stub.write_text(stub.read_text().replace("The contract", "The whole contract", 1))
    run = grader_cli("stubs", cwd=copy)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "stubs/layernorm.py is not the stub recorded" in run.stderr, run.stderr
    assert pristine.RECORD_COMMAND in run.stderr, run.stderr
    run = grader_cli("stubs", "--record", cwd=copy)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "katas/layernorm.py is the new stub too" in run.stdout, run.stdout
    assert "katas/rmsnorm.py holds other work" in run.stdout, run.stdout
    layernorm = (copy / "stubs" / "layernorm.py").read_text()
    assert (copy / "katas" / "layernorm.py").read_text() == layernorm
    assert (copy / "katas" / "rmsnorm.py").read_text() == "# my RMSNorm\n"
    assert (
        f"{pristine.blob_id(layernorm)}  layernorm.py"
        in (copy / "stubs" / "hashes.txt").read_text()
    )
    assert grader_cli("stubs", cwd=copy).returncode == 0
