"""Self-tests: a suite's checks shared by two processes (engine.shards) give the verdict one
process gives, word for word, and end as it would when the learner's code ends a process.

Each grading here runs twice through the warm grader: as every door grades (shared, where the
suite asks) and with Request.shared off (one process).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from norm_katas.checks.suite import Suite
from norm_katas.content import registry
from norm_katas.engine.request import Request
from norm_katas.engine.shards import scheduling

CATALOGUE = registry.ROOT / "tests" / "catalogue"
# The suites that ask to share their checks.
SHARED = [
    k.name for k in registry.load() if re.search(r"^    shards=2,$", k.suite.read_text(), re.M)
]
# Catalogue files whose failures come from both processes: a race and an access outside the
# tensors (every launch watched), torch work met in other checks, wrong values.
FILES = {
    "triton-layernorm": ["racy_accumulation", "partials_summed_in_torch"],
    "fused-add-rmsnorm": ["racy_row_split", "returns_y_only"],
    "triton-softmax": ["missing_mask", "backward_without_sum"],
}

# A copy of the reference that prints its process's id whenever forward runs.
PRINTS_PID = """

import os as _os

_Base = {cls}


class {cls}(_Base):
    @staticmethod
    def forward(ctx, *args):
        print("pid", _os.getpid())
        return _Base.forward(ctx, *args)
"""
# ... and one whose process ends, as os._exit ends it, in a check that the worker runs.
EXITS = """

import os as _os

_Base = {cls}


class {cls}(_Base):
    @staticmethod
    def forward(ctx, *args):
        if args[0].shape[-1] == 1000:  # test_masked_tail's second call, N = 1000
            _os._exit(7)
        return _Base.forward(ctx, *args)
"""
FUNCTION = {"triton-layernorm": "LayerNormFunction"}


@pytest.fixture
def both_ways(warm_grader, tmp_path: Path):
    """grade(kata, impl, *options) -> [(report, output, code) shared, the same in one process];
    ways=(True,): shared only."""
    count = iter(range(1000))

    def grade(kata: str, impl: Path | str, *extra: str, ways=(True, False)) -> list[tuple]:
        results = []
        for shared in ways:
            n = next(count)
            report, out = tmp_path / f"report{n}.json", tmp_path / f"out{n}.txt"
            args = ["--impl", str(impl), f"--report-json={report}", "--device", "cpu", *extra]
            request = replace(Request.parse(registry.get(kata), args), shared=shared)
            code = warm_grader.grade(request, out)
            data = json.loads(report.read_text()) if report.exists() else {}
            results.append((data, out.read_text() if out.exists() else "", code))
        return results

    return grade


def _pids(report: dict) -> list[set[str]]:
    return [set(re.findall(r"pid (\d+)", c["output"])) for c in report["checks"]]


def _without_times(report: dict) -> dict:
    return {**report, "checks": [{**c, "seconds": 0} for c in report["checks"]]}


@pytest.mark.parametrize("kata", ["triton-layernorm"])
def test_the_checks_after_the_first_alternate_between_two_processes(
    kata: str, both_ways, tmp_path: Path
) -> None:
    entry = registry.get(kata)
    mine = tmp_path / entry.file
    mine.write_text(entry.solution.read_text() + PRINTS_PID.format(cls=FUNCTION[kata]))
    ((shared, _, code),) = both_ways(kata, mine, ways=(True,))
    assert code == 0
    pids = _pids(shared)
    assert all(len(p) == 1 for p in pids), pids
    this, worker = pids[1], pids[2]
    assert this != worker and pids[0] == this, pids
    assert all(p == (this if i % 2 else worker) for i, p in enumerate(pids) if i), pids


def test_the_suites_that_share_are_those_tried_here() -> None:
    assert sorted(SHARED) == sorted(FILES)


@pytest.mark.parametrize("kata", sorted(FILES))
def test_shared_checks_print_what_one_process_prints(kata: str, both_ways) -> None:
    entry = registry.get(kata)
    files = [entry.solution, *(CATALOGUE / entry.stem / f"{name}.py" for name in FILES[kata])]
    for path in files:
        (shared, out, code), (alone, alone_out, alone_code) = both_ways(kata, path, "--all")
        assert (out, code) == (alone_out, alone_code), f"{path.name}:\n{out}\n---\n{alone_out}"
        assert _without_times(shared) == _without_times(alone), path.name


def test_a_process_that_the_code_ends_ends_the_grading_as_in_one_process(
    both_ways, tmp_path: Path
) -> None:
    entry = registry.get("triton-layernorm")
    mine = tmp_path / entry.file
    mine.write_text(entry.solution.read_text() + EXITS.format(cls=FUNCTION[entry.name]))
    (shared, out, code), (_, alone_out, alone_code) = both_ways(entry.name, mine)
    assert (out, code) == (alone_out, alone_code), f"{out}\n---\n{alone_out}"
    assert "ended abruptly (exit status 7)" in out, out
    assert not shared["finished"], shared


def test_options_that_need_one_process_keep_the_checks_in_one(both_ways, tmp_path: Path) -> None:
    entry = registry.get("triton-layernorm")
    mine = tmp_path / entry.file
    mine.write_text(entry.solution.read_text() + PRINTS_PID.format(cls=FUNCTION[entry.name]))
    ((shared, _, _),) = both_ways(entry.name, mine, "-x", ways=(True,))
    assert len(set().union(*_pids(shared))) == 1, _pids(shared)


def _asking(request: Request, shards: int = 2, items: int = 15) -> bool:
    """scheduling.asked for a grading of `request` whose suite declares Suite(shards=shards)."""
    module = ModuleType("suite")
    module.SUITE = Suite(shards=shards)
    session = SimpleNamespace(
        items=[SimpleNamespace(module=module)] * items, testsfailed=0,
        config=SimpleNamespace(option=SimpleNamespace(collectonly=False)),
    )  # fmt: skip
    grading = SimpleNamespace(handed=request, request=request, report=object())
    return scheduling.asked(grading, session)


def test_what_keeps_a_grading_in_one_process() -> None:
    base = Request.parse(registry.get("triton-layernorm"), ["--impl", "solutions"])
    assert _asking(base)
    kept = {
        "a suite that does not ask": _asking(base, shards=1),
        "two checks": _asking(base, items=2),
        "-x": _asking(replace(base, pytest_args=("-x",))),
        "-s": _asking(replace(base, pytest_args=("-s",))),
        "--perf": _asking(replace(base, perf=True)),
        "checks asked first (nox -s mutants)": _asking(replace(base, first=("test_grad_x",))),
        "pytest's own output": _asking(replace(base, checklist=False)),
        "shared off": _asking(replace(base, shared=False)),
    }
    assert not any(kept.values()), kept
