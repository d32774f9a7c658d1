"""Self-test: the test-writing mode (`--tests`, engine.proving) grades a learner's tests by what
they catch.

- Each kata's reference test file (solutions/tests/) catches every interview mistake of the
  catalogue and raises no false alarm. (That it catches every counted mutant too is proven by
  `nox -s mutants`, which runs tools.prove_tests: the mutants are hundreds of layers a kata.
  For a Triton kata, whose every layer runs in the interpreter, and for SyncBatchNorm, whose
  layers run on ranks, that proof is the only one.)
- The catalogue of weak test files (tests/catalogue/<stem>/tests/): shapes only, one
  allclose on one input, a test that rejects a correct layer. Each says what it catches
  (CATCHES: the mistakes, by catalogue file) and which of its tests raise a false alarm
  (FALSE_ALARMS); the report must name exactly the others as missed.
- A Triton kata's layers run in the interpreter, each launch watched: an access outside its
  tensors fails the test, and a test that met an engine fault is not judged there.
- The untouched stub is "Not started yet?"; a file that does not load, imports the grader,
  hangs, crashes, has no test that takes the layer, or writes files gets its own clear verdict.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from norm_katas.content import registry
from norm_katas.engine import server
from norm_katas.engine.request import Request

KATAS = [k for k in registry.load() if k.tests_pristine.exists()]
# The reference test files proven here: not those whose layers all run slowly (a Triton
# kata's in Triton's interpreter, SyncBatchNorm's on ranks: ten seconds and more a kata);
# nox -s mutants proves every kata's, mutants and all.
QUICK = [k for k in KATAS if not k.triton and k.name != "syncbatchnorm"]
WEAK = [
    (kata.name, path)
    for kata in KATAS
    for path in sorted((kata.catalogue / "tests").glob("*.py"))
]  # fmt: skip
MARKERS = ("CATCHES", "FALSE_ALARMS")


def prove(client: server.Client, tmp_path: Path, kata: str, impl: str | Path, **settings):
    """Grade a test file through the warm grader, without the mutants (nox -s mutants has them):
    (the JSON verdict, what was printed, the exit code)."""
    report, out = tmp_path / f"{kata}.json", tmp_path / f"{kata}.txt"
    request = Request.create(
        registry.get(kata), str(impl), tests=True, mutants=False, report_json=str(report),
        **settings,
    )  # fmt: skip
    code = client.grade(request, out)
    text = out.read_text() if out.exists() else ""
    assert "Traceback (most recent call last)" not in text, text
    return (json.loads(report.read_text()) if report.exists() else {}), text, code


def names(text: str) -> set[str]:
    return {n.strip() for n in text.split(",") if n.strip()}


def mistakes(kata: str) -> set[str]:
    """The kata's interview mistakes: its catalogue files counted by the mode."""
    from norm_katas.content import candidates

    return {c.key for c in candidates.for_kata(registry.get(kata)) if c.kind == "mistake"}


@pytest.mark.parametrize("kata", [k.name for k in QUICK])
def test_the_reference_tests_catch_every_interview_mistake(
    kata: str, warm_grader: server.Client, tmp_path: Path
) -> None:
    verdict, text, code = prove(warm_grader, tmp_path, kata, "solutions")
    assert code == 0 and verdict["solved"], text
    assert not verdict["alarms"] and verdict["caught"] == len(verdict["mistakes"]) > 0, text


@pytest.mark.parametrize(("kata", "path"), WEAK, ids=[f"{k}/{p.stem}" for k, p in WEAK])
def test_a_weak_test_file_is_scored_with_what_it_misses(
    kata: str, path: Path, warm_grader: server.Client, tmp_path: Path
) -> None:
    found = _markers(path)
    assert "CATCHES" in found, f"{path}: say what it catches, CATCHES = 'stem, ...' ('' for none)"
    catches, alarms = names(found["CATCHES"]), names(found.get("FALSE_ALARMS", ""))
    assert catches <= mistakes(kata), f"{path}: CATCHES names no mistake of {kata}"
    verdict, text, code = prove(warm_grader, tmp_path, kata, path)
    assert code == 1 and not verdict["solved"], text
    caught = {m["key"] for m in verdict["mistakes"] if m["caught_by"]}
    missed = {m["key"] for m in verdict["mistakes"] if not m["caught_by"]}
    assert caught == catches, f"{path.name} catches {sorted(caught)}, says {sorted(catches)}"
    assert {a["test"] for a in verdict["alarms"]} == alarms, text
    for mistake in verdict["mistakes"]:  # the missed ones are named, in the catalogue's words
        if mistake["key"] in missed:
            assert f"✗ {mistake['words']}" in text, text
    if alarms:
        assert "False alarms: a test must pass on every correct layer ✗" in text, text
        assert "Correct, written differently" not in text and "def " not in text, text
    else:
        assert "False alarms: none" in text, text


def _markers(path: Path) -> dict[str, str]:
    import ast

    found = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in MARKERS
            and isinstance(node.value, ast.Constant)
        ):
            found[node.targets[0].id] = str(node.value.value)
    return found


@pytest.mark.parametrize("kata", [k.name for k in KATAS])
def test_the_untouched_test_stub_is_not_started_yet(
    kata: str, warm_grader: server.Client, tmp_path: Path
) -> None:
    entry = registry.get(kata)
    mine = tmp_path / "tests" / f"test_{entry.stem}.py"
    mine.parent.mkdir()
    mine.write_text(entry.tests_pristine.read_text(encoding="utf-8"), encoding="utf-8")
    _, text, code = prove(warm_grader, tmp_path, kata, mine)
    assert code == 1 and "Not started yet?" in text, text


def test_the_stubs_worked_example_raises_no_false_alarm(
    warm_grader: server.Client, tmp_path: Path
) -> None:
    for kata in KATAS:
        mine = tmp_path / f"example_{kata.stem}.py"
        mine.write_text(kata.tests_pristine.read_text(encoding="utf-8") + "\n# started\n")
        verdict, text, _ = prove(warm_grader, tmp_path, kata.name, mine)
        assert verdict["tests"] and not verdict["alarms"], f"{kata.name}:\n{text}"


BAD = {
    "syntax": ("def test_x(kata)\n    pass\n", "does not load", "SyntaxError"),
    "imports_a_missing_module": (
        "import numpyy\n\ndef test_x(kata):\n    pass\n", "does not load", "No module named"
    ),
    "no_test_takes_the_layer": (
        "def test_torch():\n    assert 1 + 1 == 2\n", "No test takes the layer", "test_torch"
    ),
    "imports_the_reference": (
        "from solutions.layernorm import LayerNorm\n\ndef test_x(kata):\n    pass\n",
        "line 1 imports what your tests may not use", "solutions.layernorm",
    ),
    "imports_the_grader_at_run_time": (
        "import importlib\n\ndef test_x(kata):\n    importlib.import_module('norm_katas.checks')\n",
        "does not load", "your tests import norm_katas.checks",
    ),
    "hangs": (
        "def test_forever(kata):\n    while True:\n        pass\n",
        "did not finish in its time limit on", "line 2",
    ),
    "crashes": (
        "import os\n\ndef test_exit(kata):\n    os._exit(3)\n",
        "ended the process abruptly (exit status 3)", "other layers were not run",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_test_file_that_cannot_grade_gets_a_clear_verdict(
    case: str, warm_grader: server.Client, tmp_path: Path
) -> None:
    text, *said = BAD[case]
    mine = tmp_path / "test_mine.py"
    mine.write_text(text)
    _verdict, out, code = prove(warm_grader, tmp_path, "layernorm", mine, timeout=0.5)
    assert code == 1, out
    for words in said:
        assert words in out, out


def test_files_the_tests_write_land_in_a_scratch_folder(
    warm_grader: server.Client, tmp_path: Path
) -> None:
    mine = tmp_path / "test_mine.py"
    mine.write_text(
        "import torch\n\ndef test_saves(kata):\n"
        "    torch.save(kata.LayerNorm(4).state_dict(), 'ln.pt')\n"
        "    assert torch.load('ln.pt')['weight'].shape == (4,)\n"
    )
    verdict, out, _code = prove(warm_grader, tmp_path, "layernorm", mine)
    assert verdict["tests"] == ["test_saves"] and not verdict["alarms"], out
    assert not (registry.ROOT / "ln.pt").exists() and not (tmp_path / "ln.pt").exists()


def test_the_layers_cannot_be_told_apart_by_name_or_text(
    warm_grader: server.Client, tmp_path: Path
) -> None:
    # Every layer is the same module at the same path, without docstring or catalogue markers:
    # a test that looks for where a layer came from finds nothing to go on.
    mine = tmp_path / "test_mine.py"
    mine.write_text(
        "import inspect\n\ndef test_origin(kata):\n"
        "    text = inspect.getsource(kata)\n"
        "    assert kata.__name__ == 'layernorm' and kata.__file__.endswith('layer/layernorm.py')\n"
        "    assert 'Mistake' not in text and 'EXPECT' not in text and 'catalogue' not in text\n"
    )
    verdict, out, _code = prove(warm_grader, tmp_path, "layernorm", mine)
    assert not verdict["alarms"] and verdict["caught"] == 0, out


def test_where_fork_is_unsafe_the_children_are_fresh_interpreters(
    warm_grader: server.Client, tmp_path: Path
) -> None:
    # macOS and Windows: no fork with torch loaded. The same verdict, from `python -m norm_katas
    # _prove` children (NORM_KATAS_SPAWN=1 asks for them on Linux too).
    import os
    import subprocess
    import sys

    weak = registry.get("dyt").catalogue / "tests" / "one_allclose.py"
    forked, _, _ = prove(warm_grader, tmp_path, "dyt", weak)
    report = tmp_path / "spawned.json"
    done = subprocess.run(
        [sys.executable, "-m", "norm_katas", "grade", "dyt", "--tests", "--impl", str(weak),
         f"--report-json={report}"],
        cwd=registry.ROOT, env={**os.environ, "NORM_KATAS_SPAWN": "1"}, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    spawned = json.loads(report.read_text())
    assert spawned["mistakes"] == forked["mistakes"] and spawned["alarms"] == forked["alarms"]


def test_a_triton_kata_s_launches_are_watched_and_an_engine_fault_is_not_judged(
    warm_grader: server.Client, tmp_path: Path
) -> None:
    # A test that only calls a Triton layer at a width that is no multiple of its block: the
    # kernels that read or write past their tensors fail it, as they would crash or read garbage
    # on a GPU. A test that meets bfloat16 arithmetic, which Triton's interpreter gets wrong, is
    # not judged where it did: its failure there is no false alarm.
    mine = tmp_path / "test_mine.py"
    mine.write_text(
        "import torch\n\ndef test_runs(kata):\n"
        "    kata.rms_norm(torch.randn(3, 20), torch.ones(20))\n\n"
        "def test_bfloat16(kata):\n"
        "    x = torch.randn(3, 16, dtype=torch.bfloat16)\n"
        "    assert kata.rms_norm(x, torch.ones(16, dtype=torch.bfloat16)).isnan().all()\n"
    )
    verdict, out, _code = prove(warm_grader, tmp_path, "triton-rmsnorm", mine)
    caught = {m["key"] for m in verdict["mistakes"] if m["caught_by"] == "test_runs"}
    outside = {"missing_load_mask", "missing_mask", "unmasked_weight_load", "weight_offset_by_row"}
    assert caught == outside, out
    assert {a["test"] for a in verdict["alarms"]} <= {"test_bfloat16"}, out
    if "test_bfloat16" in verdict["unjudged"]:  # every Triton interpreter from 3.0 to 3.9
        assert "Not judged on some layers: test_bfloat16" in out, out
        assert "gets bfloat16" in verdict["unjudged"]["test_bfloat16"], out
    else:  # an engine that computes bfloat16 right judges it everywhere
        assert any(a["test"] == "test_bfloat16" for a in verdict["alarms"]), out


def test_ranks_run_a_function_on_each_rank_of_a_process_group(tmp_path: Path) -> None:
    # The `ranks` fixture of a test of SyncBatchNorm: fn(rank, world_size) on forked ranks of a
    # gloo group; a closure works, tensors come back detached, by rank.
    import torch
    import torch.distributed as dist

    from norm_katas.engine.proving.ranks import Ranks

    x = torch.arange(6.0, requires_grad=True)

    def step(rank: int, size: int) -> tuple[torch.Tensor, int]:
        part = x.chunk(size)[rank] * 2
        total = part.sum().detach()
        dist.all_reduce(total)
        return part, dist.get_world_size()

    outs = Ranks(tmp_path, 10.0)(step, world_size=3)
    assert [o[1] for o in outs] == [3, 3, 3]
    assert torch.equal(torch.cat([o[0] for o in outs]), torch.arange(6.0) * 2)
    assert not any(o[0].requires_grad for o in outs)
    assert not list(tmp_path.iterdir())  # the store's file is gone


def test_a_rank_that_raises_or_waits_forever_fails_the_call(tmp_path: Path) -> None:
    import time

    import torch
    import torch.distributed as dist

    from norm_katas.engine.proving.ranks import RankFailed, Ranks, RanksHung

    def raises(rank: int, size: int) -> None:
        if rank == 1:
            raise ValueError("one value per channel")
        dist.barrier()  # rank 0 waits for rank 1, which is gone: its error is the cause

    here = Path(__file__)
    with pytest.raises(RankFailed, match=r"rank 1 raised ValueError \(line \d+ of the test file"):
        Ranks(tmp_path, 10.0, here)(raises)

    def only_rank_0(rank: int, size: int) -> None:
        if rank == 0:
            dist.all_reduce(torch.ones(1))

    start = time.monotonic()
    with pytest.raises(RanksHung, match=r"rank 0 .* collective that not every rank joined"):
        Ranks(tmp_path, 10.0)(only_rank_0)

    def all_wait(rank: int, size: int) -> None:  # each waits for the other to send
        dist.recv(torch.ones(1), src=1 - rank)

    with pytest.raises(RanksHung, match="ranks 0, 1 never finished"):
        Ranks(tmp_path, 10.0)(all_wait)
    assert time.monotonic() - start < 30


def test_a_test_of_syncbatchnorm_runs_each_layer_on_ranks(
    warm_grader: server.Client, tmp_path: Path
) -> None:
    # Two ranks with batches of 2 and 4 samples against BatchNorm on the global batch: the
    # local-statistics layers fail it, and so does the one whose rank 0 alone joins a
    # collective (a deadlock, told in seconds); no correct layer does.
    mine = tmp_path / "test_mine.py"
    mine.write_text(
        "import torch\nimport torch.nn.functional as F\n\n"
        "def test_global_batch(kata, ranks):\n"
        "    torch.manual_seed(0)\n"
        "    x = torch.randn(6, 3, 4)\n"
        "    parts = (x[:2], x[2:])\n\n"
        "    def step(rank, world_size):\n"
        "        return kata.SyncBatchNorm(3)(parts[rank])\n\n"
        "    outs = ranks(step, world_size=2)\n"
        "    want = F.batch_norm(x, None, None, training=True)\n"
        "    torch.testing.assert_close(torch.cat(outs), want)\n"
    )
    verdict, out, _code = prove(warm_grader, tmp_path, "syncbatchnorm", mine)
    caught = {m["key"] for m in verdict["mistakes"] if m["caught_by"]}
    assert not verdict["alarms"], out
    assert {"local_statistics_only", "mean_of_rank_means", "sync_on_rank0_only"} <= caught, out


@pytest.mark.parametrize("kata", [k.name for k in KATAS])
def test_every_layer_has_every_name_the_kata_asks_for(kata: str) -> None:
    # A catalogue mistake that defines only the function (no module class) gets the
    # reference's class, calling its own function: a test of the class must catch it by its
    # mistake, never by an AttributeError.
    import ast

    from norm_katas.content import candidates

    entry = registry.get(kata)
    public = {
        node.name
        for node in ast.parse(entry.solution.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_")
    }
    for candidate in candidates.for_kata(entry):
        if candidate.kind == "mutant":
            continue
        tree = ast.parse(candidate.source)
        bound = {name for node in tree.body for name in candidates._bound(node)}
        assert public <= bound, f"{candidate.key} lacks {sorted(public - bound)}"


def test_ranks_that_synchronise_nothing_return_cleanly(tmp_path: Path) -> None:
    # A step with no collective (eval mode) returns at once on some ranks while others still
    # join the group: every rank joins before any runs it, and none leaves before all are done.
    from norm_katas.engine.proving.ranks import Ranks

    ranks = Ranks(tmp_path, 10.0)
    for _ in range(5):
        assert ranks(lambda rank, size: rank, world_size=4) == [0, 1, 2, 3]
