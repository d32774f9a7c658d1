"""The mutator behind `nox -s mutants` (tools/mutants.py): its operators and stable keys."""

import json
from dataclasses import replace
from pathlib import Path

from norm_katas.content import registry
from norm_katas.engine import server
from norm_katas.engine.request import Request
from tools import mutants

SOURCE = '''
import torch


def f(x, eps=1e-5, training=True):
    """A docstring is never mutated."""
    if training:
        x = x.detach()
    with torch.no_grad():
        y = (x - x.mean(-1, keepdim=True)) * torch.rsqrt(x.var(-1) + eps)
    return y.to(x.dtype)
'''


def test_the_operators_that_fit_torch_code() -> None:
    keys = {m.key for m in mutants.generate(SOURCE)}
    line = "y = (x - x.mean(-1, keepdim=True)) * torch.rsqrt(x.var(-1) + eps)"
    for expected in (
        f"{line} | drop-term: x.var(-1) + eps -> x.var(-1)",
        f"{line} | constant: True -> False",
        f"{line} | drop-kwarg: x.mean(-1, keepdim=True) -> x.mean(-1)",
        f"{line} | swap-name: x.mean -> x.sum",
        "if training: | negate-if: training -> not training",
        "x = x.detach() | drop-call: x.detach() -> x",
        "with torch.no_grad(): | drop-with: with torch.no_grad(): -> its body",
        "return y.to(x.dtype) | drop-call: y.to(x.dtype) -> y",
    ):
        assert expected in keys, sorted(keys)
    assert not any("docstring" in k for k in keys)


def test_keys_do_not_depend_on_line_numbers() -> None:
    moved = {m.key for m in mutants.generate("\n\n\n" + SOURCE)}
    assert moved == {m.key for m in mutants.generate(SOURCE)}


def test_first_runs_those_checks_first_and_the_report_keeps_its_order(
    warm_grader: server.Client, tmp_path: Path
) -> None:
    """nox -s mutants runs first the checks that killed similar mutants (Request.first): with
    -x the grading stops at that one, and the checklist still reads in the suite's order."""
    wrong = tmp_path / "layernorm.py"
    source = registry.get("layernorm").solution.read_text(encoding="utf-8")
    wrong.write_text(source.replace("return y.to(x.dtype)", "return 2 * y.to(x.dtype)"))
    failed, orders = {}, []
    for first in ((), ("test_forward_matches_torch",)):
        report = tmp_path / f"report{len(first)}.json"
        args = ["--impl", str(wrong), f"--report-json={report}", "-x"]
        request = replace(Request.parse(registry.get("layernorm"), args), first=first)
        assert warm_grader.grade(request, tmp_path / "out.txt") == 1
        checks = json.loads(report.read_text())["checks"]
        failed[first] = [c["name"] for c in checks if c["outcome"] == "failed"]
        orders.append([c["name"] for c in checks])
    assert failed[("test_forward_matches_torch",)] == ["test_forward_matches_torch"]
    assert len(failed[()]) == 1 and failed[()] != ["test_forward_matches_torch"]
    assert orders[0] == orders[1]


def test_early_returns_and_neighbouring_arguments() -> None:
    """An early return can go (the last one cannot: a function without it is no mutant worth
    grading), and each pair of neighbouring arguments is swapped, strides included."""
    source = "def f(x, w, sx, sy):\n    if w is None:\n        return x\n"
    source += "    return k(x, w, sx, sy)\n"
    keys = {m.key for m in mutants.generate(source)}
    assert "return x | drop-statement: return x -> pass" in keys
    assert not any("drop-statement: return k" in k for k in keys)
    swap = "return k(x, w, sx, sy) | swap-args: k(x, w, sx, sy) -> "
    assert {f"{swap}k(w, x, sx, sy)", f"{swap}k(x, sx, w, sy)", f"{swap}k(x, w, sy, sx)"} <= keys
