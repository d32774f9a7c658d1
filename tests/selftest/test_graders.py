"""Self-tests: every grader check is proven both ways (`nox -s tests`).

Each file is graded the way a learner grades theirs, in a child process forked from a warm
grader (one per test worker, see conftest.py), with `--device` passed through:
- the reference solution passes every check, and an untouched stub gets the friendly report;
- each wrong implementation in tests/catalogue/<kata>/ is caught by the check its EXPECT names,
  and that check is the report's headline. A file whose EXPECT is a torch-parity check passes
  the interview core: it is solved (exit 0), though not under --strict. ALSO names broad
  checks (safety nets behind the specific ones) that the file must fail as well. COMPILED names
  what a file shows graded compiled on a real GPU (--device cuda), where Triton's interpreter
  does not watch the kernel's memory accesses: there it replaces EXPECT, ALSO and SAYS;
- each ok_*.py there (correct, written differently) passes every check;
- each broken file in tests/catalogue/broken/ gets a clean failing report saying SAYS, and so
  does each file in uses_reference/ there, which builds on the reference solution (only the
  catalogue's own files may);
- a file in tests/catalogue/hangs/ loops in one SyncBatchNorm rank: the run stops, no process stays;
- every check of every suite is named by at least one wrong implementation.
The command line itself, and a grader broken on purpose, are tested in fresh interpreters.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from norm_katas.content import catalogue, registry
from norm_katas.practice import workspace

CATALOGUE = catalogue.FOLDER
KATAS = {k.name: k for k in registry.load()}
INTERNAL = ("Traceback (most recent call last)", "INTERNALERROR")


markers = catalogue.markers


def suite_marks(kata: registry.Kata) -> dict[str, str]:
    """Check function name -> its decorators as text, read from the suite."""
    return {
        node.name: " ".join(ast.unparse(d) for d in node.decorator_list)
        for node in ast.parse(kata.suite.read_text()).body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


def suite_checks(kata: registry.Kata) -> dict[str, bool]:
    """Check function name -> whether it is a torch-parity check."""
    return {name: "mark.parity" in marks for name, marks in suite_marks(kata).items()}


def also(path: Path, found: dict[str, str] | None = None) -> list[str]:
    found = markers(path) if found is None else found
    return [n.strip() for n in found.get("ALSO", "").split(",") if n.strip()]


def device_is_cpu(request: pytest.FixtureRequest) -> bool:
    """Graded on the CPU, where the declared failures were measured. On a GPU a compiled
    kernel's memory goes unwatched and tolerances differ: there the named checks must fail,
    and others may."""
    return str(request.config.getoption("device")) == "cpu"


def verdict_markers(path: Path, device: str) -> dict[str, str]:
    """The file's markers for this --device: on a real GPU, COMPILED stands for them all."""
    found = markers(path)
    if "COMPILED" in found and device.startswith("cuda"):
        import torch

        if torch.cuda.is_available():
            return {"EXPECT": found["COMPILED"]}
    return found


def outcomes(report: dict) -> dict[str, list[str]]:
    """check function name -> outcomes (several for a parametrized check)."""
    result: dict[str, list[str]] = {}
    for c in report["checks"]:
        result.setdefault(c["name"].split("[")[0], []).append(c["outcome"])
    return result


def summary(report: dict, output: str = "") -> str:
    lines = [
        f"  {c['outcome']:8} {c['tier']:6} {c['name']}: {c['message']}"
        for c in report.get("checks", [])
    ]
    return "\n".join([*lines, "", output])


ENTRIES = [
    pytest.param(kata.name, path, id=f"{kata.name}/{path.stem}")
    for kata in KATAS.values()
    for path in catalogue.files(kata)
]


@pytest.mark.parametrize("name", KATAS)
def test_reference_solution_passes(name: str, grade) -> None:
    report, output, code = grade(name, "solutions")
    assert code == 0, output
    assert report["strict_solved"] and report["passed"] == report["total"] > 0, summary(
        report, output
    )


@pytest.mark.parametrize("name", KATAS)
def test_untouched_stub_gets_the_friendly_report(name: str, grade, tmp_path: Path) -> None:
    # The pristine stub, not katas/ as it is now: a learner's edits must not fail this test.
    kata = KATAS[name]
    stub = tmp_path / "stub" / kata.file
    stub.parent.mkdir()
    stub.write_text(workspace.pristine_stub(kata))
    report, output, code = grade(name, stub)
    assert code == 1, output
    assert "Not started yet?" in output, output
    assert "Stuck?" not in output, output  # nothing was tried yet: no hint is offered
    assert report["passed"] == 0, summary(report)


def test_a_started_stub_is_not_called_untouched(grade, tmp_path: Path) -> None:
    # "Not started" is decided by the file's hash, not by NotImplementedError: a stub with one
    # line of the learner's in it has been started, though every check still meets a TODO.
    kata = KATAS["layernorm"]
    mine = tmp_path / kata.file
    mine.write_text(workspace.pristine_stub(kata) + "# mean and variance over the last dims\n")
    report, output, code = grade("layernorm", mine)
    assert code == 1 and "Not started yet?" not in output, output
    assert "not implemented yet" in output and report["passed"] == 0, summary(report, output)


def deciding_checks(kata: registry.Kata, expect: str, also: list[str]) -> list[str]:
    """The checks that decide a wrong file's verdict, as the report ranks them: all that rank
    before EXPECT (one failing would take the headline), EXPECT, ALSO, and for a parity
    EXPECT the whole interview core, which must pass. The others need not run."""
    marks = suite_marks(kata)
    rank = {n: ("mark.parity" in m, "mark.broad" in m, i) for i, (n, m) in enumerate(marks.items())}
    deciding = [
        name
        for name in marks
        if rank[name] <= rank[expect] or name in also or (rank[expect][0] and not rank[name][0])
    ]
    # Checks in a class are information only (Triton's bandwidth report): they always run.
    classes = [n for n in ast.parse(kata.suite.read_text()).body if isinstance(n, ast.ClassDef)]
    return deciding + [
        f.name for c in classes for f in c.body
        if isinstance(f, ast.FunctionDef) and f.name.startswith("test_")
    ]  # fmt: skip


@pytest.mark.parametrize(("name", "path"), ENTRIES)
def test_catalogue_entry(name: str, path: Path, grade, request: pytest.FixtureRequest) -> None:
    found = verdict_markers(path, str(request.config.getoption("device")))
    expect = found.get("EXPECT")
    assert expect, f"{path} has no EXPECT = '<check name>' or 'pass'"
    if expect == "pass":
        report, output, code = grade(name, path)
        assert code == 0 and report["strict_solved"], summary(report, output)
        return
    checks = suite_checks(KATAS[name])
    assert expect in checks, f"{path}: EXPECT names no check of {name}"
    for check in (expect, *also(path, found)):
        assert check in checks, f"{path}: {check} is no check of {name}"
    # Only the checks that decide the verdict: a parity mistake's core, or a core mistake's
    # whole core, which must fail where the file declares and nowhere else.
    core = not checks[expect]
    deciding = deciding_checks(KATAS[name], expect, also(path, found))
    selection = [*deciding, *(c for c, parity in checks.items() if core and not parity)]
    report, output, code = grade(name, path, "-k", " or ".join(dict.fromkeys(selection)))
    # EXPECT fails, or the headline is another check's failure that shows EXPECT's mistake
    # (fail_for), where EXPECT's own inputs do not show it.
    shown = report.get("mistake") == expect
    for check in (expect, *also(path, found)):
        assert "failed" in outcomes(report).get(check, []) or (check == expect and shown), (
            f"{path.name} was not caught by {check}:\n{summary(report, output)}"
        )
    if core and device_is_cpu(request):
        # One mistake, named checks: a check failing besides them fails for a mistake that is
        # not its own, and a learner would read its title as a second bug.
        declared = {expect, *also(path, found)}
        failing = {c for c, ends in outcomes(report).items() if "failed" in ends and c in checks}
        others = sorted(c for c in failing - declared if not checks[c])
        assert not others, (
            f"{path.name} makes one mistake, {expect}, but also fails {', '.join(others)}: make "
            "those checks blind to it, or declare them in ALSO (python -m "
            f"tools.declare_failures {name}).\n{summary(report, output)}"
        )
    if says := found.get("SAYS"):  # the words the learner must read, where it matters
        assert says in output, f"{path.name}: the report does not say {says!r}:\n{output}"
    headline = report.get("mistake") or ""
    assert headline == expect, (
        f"{path.name}: the report's headline names {headline}'s mistake, not {expect}'s, the "
        "check the file is named for. Order the suite so the most specific check comes first."
        f"\n{summary(report)}"
    )
    if checks[expect]:  # a torch-parity mistake: the interview core still passes
        assert code == 0 and report["solved"] and not report["strict_solved"], summary(
            report, output
        )
        assert "Interview core solved." in output, output
    else:
        assert code == 1 and not report["solved"], output


def test_a_kernel_writing_past_its_tensors_is_graded_in_every_check(grade) -> None:
    # Interpreted, a store goes through its raw address: a check that called such a kernel
    # unwatched (through a module, through autograd) corrupted the grading process, which died
    # on SIGSEGV. Every check watches it first, the parity ones too, and says where it wrote.
    path = CATALOGUE / "triton_layernorm" / "grid_past_the_rows.py"
    report, output, code = grade("triton-layernorm", path, "--all")
    assert code == 1 and report["finished"] and "ended abruptly" not in output, output
    parity = [c for c in report["checks"] if c["tier"] == "parity"]
    assert parity and all(c["outcome"] == "failed" for c in parity), summary(report, output)
    assert all("outside the tensors" in c["message"] for c in parity), summary(report, output)


BROKEN = sorted(catalogue.broken())


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_broken_file_gets_a_clean_report(path: Path, grade) -> None:
    says = markers(path)["SAYS"]
    # A limit in CPU seconds, so a loaded machine changes nothing: a loop stops after two. Not
    # less: simulated CUDA (FakeTensorMode) first imports torch._dynamo in the check, a second
    # of the grader's own CPU time on a slow machine, which a smaller limit leaves no room for.
    _, output, code = grade("layernorm", path, "--timeout=2")
    assert code == 1, output
    assert says in output, f"expected {says!r} in the report:\n{output}"
    if "defines no" in says:  # the check's hint would be about another mistake
        assert "-- --hints" not in output, output


# A Ctrl-C as it reaches a process: a signal, here sent by the code to its own process.
SIGNALS_ITSELF = """

import os
import signal

_Mine = LayerNorm


class LayerNorm(_Mine):
    def forward(self, x):
        os.kill(os.getpid(), signal.SIGINT)
        return super().forward(x)
"""


def test_an_interrupt_the_code_raises_fails_checks_and_a_signal_stops_the_run(
    grade, tmp_path: Path
) -> None:
    raised = CATALOGUE / "broken" / "interrupts_in_forward.py"
    report, output, code = grade("layernorm", raised)
    assert code == 1 and report["finished"] and not report["stopped"], output
    ran = {c["outcome"] for c in report["checks"]}
    assert "not run" not in ran and "did not run" not in output, summary(report, output)
    assert "your code raised KeyboardInterrupt, at" in output, output
    signalled = tmp_path / "layernorm.py"
    signalled.write_text(KATAS["layernorm"].solution.read_text() + SIGNALS_ITSELF)
    report, output, code = grade("layernorm", signalled)
    assert code == 1 and "not run" in {c["outcome"] for c in report["checks"]}, output
    assert "KeyboardInterrupt" not in output, output


@pytest.mark.parametrize("name", KATAS)
def test_every_check_is_failed_by_a_wrong_implementation(name: str) -> None:
    kata = KATAS[name]
    named = {markers(p).get("EXPECT") for p in catalogue.files(kata)}
    unproven = sorted(
        set(suite_checks(kata)) - named - {c for p in catalogue.files(kata) for c in also(p)}
    )
    assert not unproven, (
        f"no wrong implementation in tests/catalogue/ proves these checks: {unproven}"
    )
    # A check proven only by ALSO never heads a report: only a broad safety net may be that.
    marks = suite_marks(kata)
    unheaded = sorted(c for c in set(marks) - named if "mark.broad" not in marks[c])
    assert not unheaded, f"no wrong implementation has these specific checks as EXPECT: {unheaded}"
    wrong = [p for p in catalogue.files(kata) if markers(p).get("EXPECT") != "pass"]
    right = [p for p in catalogue.files(kata) if markers(p).get("EXPECT") == "pass"]
    assert len(wrong) >= 6, f"{name} needs at least six wrong implementations, has {len(wrong)}"
    assert len(right) >= 2, f"{name} needs at least two correct variants, has {len(right)}"


@pytest.mark.parametrize("name", KATAS)
def test_every_kata_has_both_tiers_in_order(name: str) -> None:
    checks = suite_checks(KATAS[name])
    assert any(not parity for parity in checks.values()), f"{name} has no interview-core check"


# Learner code as the grader counts it: compiled under a file name of its own, not a suite's.
LOOPS = """
import torch

def over_dims(x):
    # rank-polymorphic, as torch's decompositions are: Python loops over the dims only
    reduce, shape = [], []
    for d in range(x.dim()):
        if d == 1:
            shape.append(x.shape[d])
        else:
            reduce.append(d)
            shape.append(1)
    return x - x.mean(reduce).reshape(shape)

def over_rows(x):
    return torch.stack([row - row.mean() for row in x])
"""


def test_the_vectorization_probe_compares_like_with_like() -> None:
    # A loop over x's dims runs as often on a larger input of the same rank; a loop over rows
    # does not. Inputs of another rank, or with a shorter dim, are the suite's mistake.
    import torch

    from norm_katas.checks import expect_vectorized

    learner: dict = {}
    exec(compile(LOOPS, "<learner>", "exec"), learner)
    small, large = torch.randn(2, 3, 4), torch.randn(16, 12, 32)
    expect_vectorized(learner["over_dims"], small, large, given="over_dims")
    with pytest.raises(pytest.fail.Exception, match="on the small input but"):
        expect_vectorized(learner["over_rows"], small, large, given="over_rows")
    for other in ((64, 8), (64, 8, 32, 2), (16, 2, 32), (2, 3, 8)):
        with pytest.raises(ValueError, match="expect_vectorized"):
            expect_vectorized(learner["over_dims"], small, torch.randn(other), given="over_dims")


def test_strict_requires_torch_parity(grade) -> None:
    path = CATALOGUE / "dropout" / "wrong_error_message.py"
    _, output, code = grade("dropout", path, "--strict")
    assert code == 1, output
    _, output, code = grade("dropout", path, "--all")
    assert code == 0 and "raised ValueError('p must be a probability')" in output, output


def test_a_selection_lists_only_its_checks_and_claims_no_verdict(grade) -> None:
    report, output, code = grade("layernorm", "solutions", "-k", "eps")
    said = [c["name"] + " " + c["description"].lower() for c in report["checks"]]
    assert said and all("eps" in s for s in said), said  # -k: by name or checklist line
    assert code == 0 and report["partial"] and not report["solved"], summary(report, output)
    assert "Only the selected checks ran" in output and "solved" not in output, output
    wrong = CATALOGUE / "layernorm" / "eps_outside_sqrt.py"
    report, output, code = grade("layernorm", wrong, "-k", "eps")
    assert code == 1 and report["headline"] == "test_eps_inside_sqrt", summary(report, output)
    # Parity left out, the whole core run: the core is solved, strictly nothing is.
    report, output, code = grade("layernorm", "solutions", "-m", "not parity")
    assert code == 0 and report["solved"] and not report["strict_solved"], summary(report)
    assert re.search(r"Interview core (\d+)/\1 ✓ solved", output), output


def test_the_benchmarks_wrong_file_grades_as_a_learners_file(grade, tmp_path: Path) -> None:
    # nox -s benchmark (not run by CI) saves it outside the catalogue and waits for a verdict.
    from benchmarks import feedback

    mine = tmp_path / KATAS[feedback.KATA].file
    shutil.copyfile(feedback.WRONG, mine)
    report, output, code = grade(feedback.KATA, mine)
    assert code == 1 and re.search(feedback.VERDICT, output), output
    assert report["headline"] == markers(feedback.WRONG)["EXPECT"], summary(report, output)


def test_headline_folds_failures_and_all_expands_them(grade) -> None:
    path = CATALOGUE / "dropout" / "no_scaling.py"
    report, output, code = grade("dropout", path)
    failed = [c for c in report["checks"] if c["outcome"] == "failed"]
    assert code == 1 and len(failed) > 2, summary(report)
    folded = re.search(r"(\d+) other checks? fails? \(-- --all shows each\):", output)
    assert folded and int(folded[1]) >= 1, output
    _, expanded, _ = grade("dropout", path, "--all")
    assert "Every other failure" in expanded and len(expanded) > len(output), expanded


# One kata for each way a perf_case calls the learner's code, where an unfinished stub raises:
# a module, an autograd Function, an object with methods, ranks, a Triton kernel.
PERF_OF_A_STUB = ("layernorm", "layernorm-backward", "welford", "syncbatchnorm", "triton-rmsnorm")


@pytest.mark.parametrize("name", KATAS)
def test_perf_reports_without_grading(name: str, grade, tmp_path: Path) -> None:
    # One check: the timing comes after the checks, whichever ran (every kata's reference is
    # graded whole by test_reference_solution_passes).
    first = ["-k", next(iter(suite_checks(KATAS[name])))]
    report, output, code = grade(name, "solutions", "--perf", *first)
    assert code == 0, output  # a report, never a verdict
    perf = report.get("perf") or {}
    assert "error" not in perf and perf["mine"]["forward_s"] > 0, perf
    assert "(reported, never graded)" in output and "forward" in output
    if name not in PERF_OF_A_STUB:
        return
    stub = tmp_path / KATAS[name].file
    stub.write_text(workspace.pristine_stub(KATAS[name]))
    report, output, code = grade(name, stub, "--perf", *first)
    assert code == 1 and "Not measured: your code raised NotImplementedError" in output, output


def test_cuda_without_a_gpu_says_how_it_grades(grade) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a real GPU is present: --device cuda runs there")
    _, output, code = grade("dropout", "solutions", "--device", "cuda")
    assert code == 0, output
    assert "simulated CUDA" in output


# A bfloat16 × bfloat16 product in Triton's interpreter, checked apart from the grader.
BF16_PRODUCT = """
import os
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.language as tl

@triton.jit
def mul(X, W, Y):
    cols = tl.arange(0, 4)
    tl.store(Y + cols, tl.load(X + cols) * tl.load(W + cols))

x = torch.tensor([0.5, -1.0, 1.5, 2.0], dtype=torch.bfloat16)
w = torch.tensor([1.5, 2.0, -0.5, 1.25], dtype=torch.bfloat16)
y = torch.empty(4, dtype=torch.bfloat16)
mul[(1,)](x, w, y)
print(triton.__version__, torch.equal(y, x * w))
"""


def test_an_engine_fault_skips_what_it_affects_never_fails_it(
    grade, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # A correct kernel that multiplies by the weight in bfloat16, as Hugging Face's
    # LlamaRMSNorm rounds: where the engine multiplies bfloat16 wrongly (Triton's interpreter,
    # every release so far), its bfloat16 check is skipped with a note and the kata solved on
    # the others; where the engine is right, the check passes.
    import torch

    path = CATALOGUE / "triton_rmsnorm" / "ok_weight_dtype_product.py"
    report, output, code = grade("triton-rmsnorm", path)
    assert code == 0 and report["solved"], summary(report, output)
    bf16 = "test_half_precision[bfloat16]"
    check = next(c for c in report["checks"] if c["name"] == bf16)
    others = [c for c in report["checks"] if c["name"] not in (bf16, "test_bandwidth")]
    assert all(c["outcome"] == "passed" for c in others), summary(report)
    if str(request.config.getoption("device")).startswith("cuda") and torch.cuda.is_available():
        assert check["outcome"] == "passed", summary(report)  # compiled
        return
    script = tmp_path / "bf16_product.py"
    script.write_text(BF16_PRODUCT)
    probe = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )
    version, right = probe.stdout.split()[-2:]
    if right == "True":
        assert check["outcome"] == "passed", summary(report)
        return
    assert check["outcome"] == "skipped", summary(report)
    note = f"Triton {version}'s interpreter gets bfloat16 × bfloat16 wrong"
    assert note in check["message"] and "--device cuda" in check["message"], check["message"]
    # Only this check is skipped: the bandwidth report is information, listed apart, not counted.
    assert note in output and "(1 skipped)" in output, output


def test_a_libdevice_function_the_interpreter_lacks_is_the_graders_failure(
    grade, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # libdevice.pow calls into CUDA's math library, which Triton's interpreter cannot: on the
    # CPU that says nothing about the kernel (right here), so it is the grader's failure, named.
    import torch

    if str(request.config.getoption("device")).startswith("cuda") and torch.cuda.is_available():
        pytest.skip("compiled on the GPU, libdevice runs")
    liger = (CATALOGUE / "triton_rmsnorm" / "ok_libdevice_rsqrt.py").read_text()
    rsqrt = "rsqrt(tl.sum(x * x, axis=0) / N + eps)"
    assert rsqrt in liger
    pow_file = tmp_path / "pow.py"
    pow_file.write_text(
        liger.replace(rsqrt, "libdevice.pow(tl.sum(x * x, axis=0) / N + eps, -0.5)")
        + "\nfrom triton.language.extra import libdevice\n"
    )
    report, output, code = grade("triton-rmsnorm", pow_file)
    assert code == 3 and not report.get("solved"), output
    assert "cannot run libdevice.pow, which your kernel calls" in output, output
    assert "not with your code" in output and "--device cuda" in output, output


def test_an_engine_fault_is_named_for_an_operation_the_kernel_ran(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bfloat16 × and + both go through the interpreter's binary_op: a kernel that only adds
    # must read that the engine gets + wrong, not ×, which it never ran.
    import torch

    from norm_katas.checks.triton_engine import probe

    shared, fmul, fadd = ("binary_op", "bf16", "bf16"), ("create_fmul",), ("create_fadd",)
    mul = probe.Fault("bfloat16 × bfloat16", "", torch.bfloat16, frozenset({shared, fmul}))
    add = probe.Fault("bfloat16 + bfloat16", "", torch.bfloat16, frozenset({shared, fadd}))
    monkeypatch.setattr(probe, "FAULTS", [mul, add])
    bf16 = {torch.bfloat16}
    assert probe.blamed(frozenset({shared, fadd}), bf16) is add
    assert probe.blamed(frozenset({shared, fmul, fadd}), bf16) is mul
    assert probe.blamed(frozenset({shared}), bf16) is mul  # only the shared step: either
    assert probe.blamed(frozenset({("create_fadd", "fp32")}), bf16) is None


# -- the command line, in fresh interpreters ------------------------------------------------


def cli(
    *args: str, cwd: Path = registry.ROOT, env: dict | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "norm_katas", *args], cwd=cwd, capture_output=True, text=True,
        timeout=300, env=env or dict(os.environ),
    )  # fmt: skip


# A block around torch's attention and an autograd Function (a module: the practice tests).
@pytest.mark.parametrize("name", ["prepost-norm", "batchnorm-backward"])
def test_command_line_grades_the_solution(name: str, tmp_path: Path) -> None:
    # A one-shot grading runs without the warm server, torch._dynamo deferred: same verdicts
    # (test_a_one_shot_grading_does_without_torch_dynamo).
    report = tmp_path / "r.json"
    run = cli("grade", name, "--impl", "solutions", f"--report-json={report}")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Interview core" in run.stdout and json.loads(report.read_text())["strict_solved"]


def _telling_whether_dynamo_loaded(tmp_path: Path) -> tuple[Path, Path]:
    """A correct layernorm.py that writes, at each forward, whether torch._dynamo is loaded."""
    seen = tmp_path / "seen.txt"
    mine = tmp_path / "layernorm.py"
    reference = (registry.ROOT / "solutions" / "layernorm.py").read_text()
    mine.write_text(
        f"{reference}\n\nimport sys\n\n_Reference = LayerNorm\n\n\nclass LayerNorm(_Reference):\n"
        "    def forward(self, x):\n"
        f"        with open({str(seen)!r}, 'a') as f:\n"
        "            f.write(str('torch._dynamo' in sys.modules) + '\\n')\n"
        "        return super().forward(x)\n"
    )
    return mine, seen


def test_a_one_shot_grading_does_without_torch_dynamo(tmp_path: Path) -> None:
    # torch._dynamo and sympy cost a one-shot grading a second (two thirds of what it took
    # beyond `import torch`). The meta device's reference implementations ask it for nothing
    # but `disable`, and the NaN fill for nothing at all: a grading on the CPU never loads it.
    mine, seen = _telling_whether_dynamo_loaded(tmp_path)
    run = cli("grade", "layernorm", "--impl", str(mine), "--device", "cpu")
    assert run.returncode == 0, run.stdout + run.stderr
    assert set(seen.read_text().split()) == {"False"}, "a check loaded torch._dynamo"
    # And where something does need it, the real module loads, once: the stand-in steps aside.
    script = (
        "import sys, torch\nfrom norm_katas.runtime import torch_compat\n"
        "torch_compat.defer_dynamo()\nx = torch.randn(4, 8, device='meta')\n"
        "(x - x.mean(-1, keepdim=True)).var(-1).sqrt()\n"
        "assert 'torch._dynamo' not in sys.modules\n"
        "from torch._subclasses.fake_tensor import FakeTensorMode\n"
        "with FakeTensorMode(allow_non_fake_inputs=True):\n    torch.randn(3).sum()\n"
        "import torch._dynamo.config as config\ndynamo = sys.modules['torch._dynamo']\n"
        "assert torch._dynamo is dynamo and dynamo.config is config, 'two torch._dynamo'\n"
        "assert dynamo.disable(len) is not len, 'the real disable'\n"
        "(x - x.mean(-1, keepdim=True)).var(-1).sqrt()  # the same wrappers, now the real one's\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=registry.ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_warm_grader_does_without_torch_dynamo_too(grade, tmp_path: Path) -> None:
    # Nor does a grader that grades many times (watch mode, the mock, these self-tests): it
    # would cost each of them a second and more to start, for the few files that need it.
    mine, seen = _telling_whether_dynamo_loaded(tmp_path)
    # What the checks do need of it, torch's symbolic shapes (autograd loads them, and sympy,
    # on a backward with a gradient given), the warm grader imported once for every child.
    warm = tmp_path / "warm.txt"
    mine.write_text(
        mine.read_text() + f"\nopen({str(warm)!r}, 'w').write(str('sympy' in sys.modules))\n"
    )
    report, output, code = grade("layernorm", mine, "--device", "cpu")
    assert code == 0 and report["strict_solved"], output
    assert set(seen.read_text().split()) == {"False"}, "a check loaded torch._dynamo"
    assert warm.read_text() == "True", "each grading's child imports sympy afresh"


def test_command_line_strict_asks_for_parity_too() -> None:
    # Exit 0 for the same file without --strict: test_practice's recorded gradings.
    parity_only = CATALOGUE / "dropout" / "wrong_error_message.py"
    run = cli("grade", "dropout", "--impl", str(parity_only), "--strict")
    assert run.returncode == 1 and "Interview core solved." in run.stdout, run.stdout
    assert not any(m in run.stdout + run.stderr for m in INTERNAL)


def test_a_rank_that_died_does_not_take_the_grading_with_it() -> None:
    # The grading process keeps SIGPIPE's default (for `| head`). A message to a rank that has
    # died must not stop it by SIGPIPE: that cut a CI run's checklist short, exit 1, no word.
    import multiprocessing
    import signal

    from norm_katas.checks.distributed.rank import send

    mine, theirs = multiprocessing.Pipe()
    theirs.close()  # the rank is gone
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            send(mine, ("run", "tag", None, None))
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"the sender ended with {status}"


def test_a_sigpipe_with_the_reader_still_there_is_the_graders_failure(tmp_path: Path) -> None:
    # A grading stopped by SIGPIPE ends quietly only where its output has no reader (`| head`).
    from norm_katas.engine.runner.parent import _reader_gone

    read, write = os.pipe()
    with os.fdopen(write, "w") as out:
        assert not _reader_gone(out)
        os.close(read)
        assert _reader_gone(out)
    with open(tmp_path / "out.txt", "w") as out:
        assert not _reader_gone(out)


def test_a_rank_that_hangs_is_stopped_and_leaves_no_process(tmp_path: Path) -> None:
    # One rank loops forever in forward: the check says so, the run stops after two such
    # checks, and every rank is gone when the grader exits (none left holding a port).
    loop = CATALOGUE / "hangs" / "syncbatchnorm_rank_loops.py"
    mark = f"norm-katas-selftest-{os.getpid()}-{tmp_path.name}"
    run = cli(
        "grade",
        "syncbatchnorm",
        "--impl",
        str(loop),
        env={**os.environ, "NORM_KATAS_SELFTEST": mark, "NORM_KATAS_RANK_WAIT_S": "0.5"},
    )
    said = f"{run.stdout}\n--- stderr ---\n{run.stderr}"
    assert run.returncode == 1, said
    assert "rank 1 did not finish" in run.stdout, said
    assert "Stopped early" in run.stdout, said
    assert not any(m in run.stdout + run.stderr for m in INTERNAL)
    left = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if mark.encode() in (proc / "environ").read_bytes():
                left.append(proc.name)
        except OSError:
            continue  # gone, or not ours to read
    assert not left, f"processes left behind by the grading: {left}"


def test_a_reader_that_stops_early_gets_no_error() -> None:
    # `nox -s kata-... | head`: the grading ends quietly when its output is closed.
    run = subprocess.Popen(
        [sys.executable, "-m", "norm_katas", "grade", "layernorm", "--impl", "solutions"],
        cwd=registry.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert run.stdout is not None and run.stderr is not None
    assert "LayerNorm" in run.stdout.readline()
    run.stdout.close()
    errors = run.stderr.read()
    assert run.wait(timeout=300) == 1, errors
    assert not errors.strip(), errors


def test_the_supported_torch_range_is_stated_once() -> None:
    from norm_katas.runtime import torch_compat

    floor = ".".join(map(str, torch_compat.MIN_TORCH))
    spec = f"torch>={floor},<3"
    pyproject = (registry.ROOT / "pyproject.toml").read_text()
    noxfile = (registry.ROOT / "noxfile.py").read_text()
    docs = (registry.ROOT / "docs" / "grading.md").read_text()
    assert f'"{spec}"' in pyproject, "pyproject.toml's torch requirement"
    assert f'TORCH_RANGE = "{spec}"' in noxfile, "noxfile.py's TORCH_RANGE"
    assert f'OLDEST_TORCH = "{floor}.' in noxfile, "noxfile.py's OLDEST_TORCH (nox -s compat)"
    assert f"(`{spec}`" in docs and f"needs torch >= {floor};" in docs, "docs/grading.md"


def test_usage_errors_exit_2() -> None:
    run = cli("grade", "layernrom")
    assert run.returncode == 2 and "no kata named 'layernrom'" in run.stderr
    run = cli("grade", "layernorm", "--impl", "no/such/file.py")
    assert run.returncode == 2 and "does not exist" in run.stdout + run.stderr
    run = cli("grade", "layernorm", "--device", "tpu")
    assert run.returncode == 2 and "expected cpu, cuda or mps" in run.stdout + run.stderr


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    """This working tree copied, so the grader can be broken on purpose; its katas/ holds the
    pristine stubs, whatever the learner's katas/ holds."""
    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns(".git", ".nox", "__pycache__", "*.pyc", "catalogue")
    shutil.copytree(registry.ROOT, copy, ignore=ignore)
    for kata in KATAS.values():
        (copy / "katas" / kata.file).write_text(workspace.pristine_stub(kata))
    return copy


def test_a_suite_that_does_not_import_is_the_graders_failure(repo_copy: Path) -> None:
    suite = repo_copy / "tests" / "test_layernorm.py"
    suite.write_text('raise RuntimeError("boom: a broken suite")\n' + suite.read_text())
    run = cli("grade", "layernorm", "--impl", "solutions", cwd=repo_copy)
    output = run.stdout + run.stderr
    assert run.returncode == 3, output
    assert "norm-katas could not grade" in output and "boom: a broken suite" in output
    assert "not with your code" in output and "torch " in output


def test_a_broken_plugin_is_the_graders_failure(repo_copy: Path) -> None:
    # The printer, which the plugin imports: its header is the first thing a grading prints.
    plugin = repo_copy / "norm_katas" / "engine" / "report" / "printer.py"
    text = plugin.read_text().replace(
        "def header(", "def header(self, *a): raise KeyError('x')\n    def _old_header(", 1
    )
    assert text != plugin.read_text(), "Printer.header moved: break the plugin elsewhere"
    plugin.write_text(text)
    run = cli("grade", "layernorm", "--impl", "solutions", cwd=repo_copy)
    output = run.stdout + run.stderr
    assert run.returncode == 3, output
    assert "norm-katas could not grade" in output and "KeyError" in output


def test_an_unsupported_torch_is_named_at_start(repo_copy: Path) -> None:
    compat = repo_copy / "norm_katas" / "runtime" / "torch_compat.py"
    compat.write_text(compat.read_text().replace("MIN_TORCH = (2, 4)", "MIN_TORCH = (99, 0)"))
    run = cli("grade", "layernorm", cwd=repo_copy)
    assert run.returncode == 3
    assert run.stderr.startswith("norm-katas needs torch >= 99.0; this environment has "), (
        run.stderr
    )
    assert "Choosing the torch build" in run.stderr


def test_readme_kata_table_matches_the_registry() -> None:
    from norm_katas.authoring.docs_writer import TABLE
    from norm_katas.content.registry import kata_table

    readme = (registry.ROOT / "README.md").read_text()
    between = TABLE.search(readme)  # new-kata rewrites what stands between the two markers
    assert between, "README's kata table lost its <!-- kata-table --> or <!-- /kata-table -->"
    assert kata_table() in between[0], (
        "README's kata table is stale: paste `python -m norm_katas list --markdown`"
    )


def test_names_match_whole_namespaces() -> None:
    # torch.functional holds plain tensor functions (einsum, norm), torch.func autograd's
    # transforms: a rule that recognises code by name must not take one for the other.
    from norm_katas.runtime.tracing import in_namespace

    assert in_namespace("torch.func.vjp", "torch.func")
    assert in_namespace("torch.func", "torch.func")
    assert not in_namespace("torch.functional.einsum", "torch.func")
    assert not in_namespace("torch.funcx", "torch._functorch", "torch.func")


@pytest.mark.parametrize("name", KATAS)
def test_every_part_the_registry_names_exists(name: str) -> None:
    """One kata's parts are named by its registry entry (Kata.parts), and new-kata writes each."""
    missing = [f"{role}: {path}" for role, path in KATAS[name].parts().items() if not path.exists()]
    assert not missing, f"{name}'s parts that are missing:\n" + "\n".join(missing)
