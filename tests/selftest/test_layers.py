"""Self-tests for the package's rooms (docs/checking.md draws them): the import contracts in
pyproject.toml hold, and they can fail: an upward import or a cycle planted in a copy of the
package breaks them. The suites import nothing of norm_katas but the checks library.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from norm_katas.content import registry

ROOT = registry.ROOT


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter's contracts, checked on the package at `root` (as `nox -s lint` does)."""
    pytest.importorskip("importlinter", reason="nox -s tests installs import-linter")
    command = "from importlinter.cli import lint_imports_command as c; c()"
    return subprocess.run(
        [sys.executable, "-c", command, "--no-cache"], cwd=root, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """The package and its contracts, copied: a place to plant an import."""
    shutil.copytree(
        ROOT / "norm_katas", tmp_path / "norm_katas", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def plant(root: Path, module: str, line: str) -> None:
    path = root / Path(*module.split(".")).with_suffix(".py")
    if not path.exists():
        path = path.with_suffix("") / "__init__.py"
    path.write_text(path.read_text(encoding="utf-8") + f"\n\ndef _planted():\n    {line}\n")


def test_the_contracts_hold(package_copy: Path) -> None:
    run = lint_imports(package_copy)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Contracts: 3 kept, 0 broken." in run.stdout, run.stdout


@pytest.mark.parametrize(
    ("module", "line", "says"),
    [
        # The engine reaching up into a door, even lazily inside a function.
        (
            "norm_katas.engine.runner", "from norm_katas.doors import cli",
            "norm_katas.engine is not allowed to import norm_katas.doors",
        ),
        # A check reaching up into the engine.
        (
            "norm_katas.checks.comparisons", "from norm_katas.engine import report",
            "norm_katas.checks is not allowed to import norm_katas.engine",
        ),
        # A runtime room importing the authors' tools.
        (
            "norm_katas.content.registry", "from norm_katas.authoring import docs_writer",
            "norm_katas.content is not allowed to import norm_katas.authoring",
        ),
        # Two modules of one room importing each other.
        (
            "norm_katas.runtime.outcomes", "from norm_katas.runtime import limits",
            "No cycles are allowed in norm_katas.runtime",
        ),
    ],
)  # fmt: skip
def test_a_planted_import_breaks_them(
    package_copy: Path, module: str, line: str, says: str
) -> None:
    plant(package_copy, module, line)
    run = lint_imports(package_copy)
    assert run.returncode == 1, run.stdout + run.stderr
    assert says in run.stdout, run.stdout


def test_suites_import_only_the_checks_library() -> None:
    """A suite is written against norm_katas.checks alone: the rest is the engine's business."""
    found = []
    for kata in registry.load():
        for node in ast.walk(ast.parse(kata.suite.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""] if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names] if isinstance(node, ast.Import) else []
            )  # fmt: skip
            for name in names:
                inside = name == "norm_katas.checks" or name.startswith("norm_katas.checks.")
                if name.split(".")[0] == "norm_katas" and not inside:
                    found.append(f"{kata.suite.name} line {node.lineno}: {name}")
    assert not found, "suites importing outside norm_katas.checks:\n" + "\n".join(found)


MODULE_LINES, CLASS_LINES = 600, 300  # one job per module: a guide that a reader can hold


def test_no_module_or_class_outgrows_one_job() -> None:
    """A module over 600 lines or a class over 300 does several jobs: split it by job."""
    found = []
    for path in sorted((ROOT / "norm_katas").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT)
        if (lines := len(text.splitlines())) > MODULE_LINES:
            found.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > CLASS_LINES:
                    found.append(f"{name}: class {node.name}, {size} lines")
    assert not found, "\n".join(found)


FIRST_CHECK_BY = 100  # lines: a suite is read as its kata's specification, from its header


@pytest.mark.parametrize("kata", registry.load(), ids=lambda k: k.name)
def test_a_suite_opens_with_its_checks(kata: registry.Kata) -> None:
    """Machinery belongs in the checks library, or below the checks: a reader meets the
    suite's header, then its checks."""
    tree = ast.parse(kata.suite.read_text(encoding="utf-8"))
    checks = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef)
        and node.name.startswith(("test_", "Test"))
    ]
    assert checks, f"{kata.suite.name} has no check"
    first = min(node.lineno for node in [checks[0], *checks[0].decorator_list])
    assert first <= FIRST_CHECK_BY, f"{kata.suite.name}: the first check is at line {first}"
