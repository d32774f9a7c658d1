"""Self-tests: every grader check is proven both ways (`nox -s tests`).

Each file is graded the way a learner grades theirs, in a child process through the CLI:
- the reference solution passes every check, and an untouched stub gets the friendly report;
- each wrong implementation in tests/catalogue/<kata>/ fails the check its EXPECT names;
- each ok_*.py there (correct, written differently) passes every check;
- each broken file in tests/catalogue/broken/ gets a clean failing report saying SAYS;
- every check of every suite is named by at least one wrong implementation.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader import registry, workspace

CATALOGUE = registry.ROOT / "tests" / "catalogue"
KATAS = {k.name: k for k in registry.load()}
MARKER = re.compile(r"""\b(EXPECT|SAYS)\s*=\s*["']([^"']+)["']""")
INTERNAL = ("Traceback (most recent call last)", "INTERNALERROR")


def grade(kata: str, impl: Path | str, tmp_path: Path, *extra: str) -> tuple[dict, str, int]:
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "grader", "grade", kata, "--impl", str(impl),
           f"--report-json={report}", *extra]  # fmt: skip
    env = {**os.environ, "NORM_KATAS_DATA": str(tmp_path / "data")}  # not the user's history
    run = subprocess.run(
        cmd, cwd=registry.ROOT, capture_output=True, text=True, timeout=300, env=env
    )
    output = run.stdout + run.stderr
    for marker in INTERNAL:
        assert marker not in output, f"grading {impl} printed an internal error:\n{output}"
    data = json.loads(report.read_text()) if report.exists() else {}
    return data, output, run.returncode


def markers(path: Path) -> dict[str, str]:
    return dict(MARKER.findall(path.read_text()))


def catalogue(kata: registry.Kata) -> list[Path]:
    return sorted((CATALOGUE / Path(kata.file).stem).glob("*.py"))


def check_names(kata: registry.Kata) -> set[str]:
    tree = ast.parse(kata.suite.read_text())
    return {
        n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
    }


def outcomes(report: dict) -> dict[str, list[str]]:
    """check function name -> outcomes (several for a parametrized check)."""
    result: dict[str, list[str]] = {}
    for c in report["checks"]:
        result.setdefault(c["name"].split("[")[0], []).append(c["outcome"])
    return result


def summary(report: dict) -> str:
    return "\n".join(f"  {c['outcome']:8} {c['name']}: {c['message']}" for c in report["checks"])


ENTRIES = [
    pytest.param(kata.name, path, id=f"{kata.name}/{path.stem}")
    for kata in KATAS.values()
    for path in catalogue(kata)
]


@pytest.mark.parametrize("name", KATAS)
def test_reference_solution_passes(name: str, tmp_path: Path) -> None:
    report, output, code = grade(name, "solutions", tmp_path)
    assert code == 0, output
    assert report["passed"] == len(report["checks"]) > 0, summary(report)


@pytest.mark.parametrize("name", KATAS)
def test_untouched_stub_gets_the_friendly_report(name: str, tmp_path: Path) -> None:
    # The committed stub, not katas/ as it is now: a learner's edits must not fail this test.
    kata = KATAS[name]
    stub = tmp_path / "stub" / kata.file
    stub.parent.mkdir()
    stub.write_text(workspace.pristine_stub(kata))
    report, output, code = grade(name, stub, tmp_path)
    assert code == 1
    assert "Not started yet?" in output, output
    assert report["passed"] == 0, summary(report)


@pytest.mark.parametrize(("name", "path"), ENTRIES)
def test_catalogue_entry(name: str, path: Path, tmp_path: Path) -> None:
    expect = markers(path).get("EXPECT")
    assert expect, f"{path} has no EXPECT = '<check name>' or 'pass'"
    report, output, code = grade(name, path, tmp_path)
    if expect == "pass":
        assert code == 0 and report["passed"] == len(report["checks"]), summary(report)
        return
    assert expect in check_names(KATAS[name]), f"{path}: EXPECT names no check of {name}"
    assert code == 1, output
    assert "failed" in outcomes(report)[expect], (
        f"{path.name} was not caught by {expect}:\n{summary(report)}"
    )


@pytest.mark.parametrize("path", sorted((CATALOGUE / "broken").glob("*.py")), ids=lambda p: p.stem)
def test_broken_file_gets_a_clean_report(path: Path, tmp_path: Path) -> None:
    says = markers(path)["SAYS"]
    _, output, code = grade("layernorm", path, tmp_path, "--timeout=4")
    assert code != 0, output
    assert says in output, f"expected {says!r} in the report:\n{output}"


@pytest.mark.parametrize("name", KATAS)
def test_every_check_is_failed_by_a_wrong_implementation(name: str) -> None:
    kata = KATAS[name]
    named = {markers(p).get("EXPECT") for p in catalogue(kata)}
    unproven = sorted(check_names(kata) - named)
    assert not unproven, (
        f"no wrong implementation in tests/catalogue/ proves these checks: {unproven}"
    )
    wrong = [p for p in catalogue(kata) if markers(p).get("EXPECT") != "pass"]
    assert len(wrong) >= 6, f"{name} needs at least six wrong implementations, has {len(wrong)}"


def test_cuda_without_a_gpu_says_how_it_grades(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a real GPU is present: --device cuda runs there")
    _, output, code = grade("dropout", "solutions", tmp_path, "--device", "cuda")
    assert code == 0, output
    assert "simulated CUDA" in output


def test_unknown_kata_is_a_clear_usage_error(tmp_path: Path) -> None:
    env = {**os.environ, "NORM_KATAS_DATA": str(tmp_path)}
    cmd = [sys.executable, "-m", "grader", "grade", "layernrom"]
    run = subprocess.run(cmd, cwd=registry.ROOT, capture_output=True, text=True, env=env)
    assert run.returncode == 2
    assert "no kata named 'layernrom'" in run.stderr


def test_readme_kata_table_matches_the_registry() -> None:
    from grader.__main__ import kata_table

    readme = (registry.ROOT / "README.md").read_text()
    assert kata_table() in readme, (
        "README's kata table is stale: paste `python -m grader list --markdown`"
    )
