"""Self-test: a busy machine changes no verdict (`nox -s tests`).

A check's time limit counts the CPU time of the code it runs (runtime.limits), so a machine busy
with other work slows a grading down without failing it, and the SyncBatchNorm ranks wait for
each other by CPU time too. Here the grading server, and so every grading it forks with its
ranks, shares one core with BUSY processes that never stop computing: a check takes several
times its CPU time in wall-clock time. The checks run with a limit of LIMIT_S, a few times what
the costliest of them uses, but below what the load stretches some of them to: a limit that
counted wall-clock time would fail correct files here (as it did, before norm_katas.runtime.limits).

Under that load correct files get their usual verdict: every kata's reference with a check on
simulated CUDA (the device check), among them the SyncBatchNorm reference with its four ranks,
and correct variants from the catalogue. A file that loops forever is still the learner's
timeout, with its line. The assertions are about verdicts, never about how long anything took.

One core, not all of them: the other test workers keep the rest of the machine. The gradings
are selections (-k), each with the device check and the kata's costliest checks: every check
of every kata would take minutes under this load. A selection's usual verdict: exit 0, every
selected check passes.

Then the evidence a limit's verdict rests on: where a stuck process is (a faulthandler dump),
and whose code a stack is in.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from norm_katas.content import registry
from norm_katas.engine import server
from norm_katas.engine.runner import parent
from norm_katas.runtime import limits

CATALOGUE = registry.ROOT / "tests" / "catalogue"
# The report's machine had a load of 6 on 2 cores, 3 a core; here the same on the grader's one
# core: the grader and BUSY loops share it, and a check takes about three times its CPU time.
BUSY = 2
# CPU seconds per check. The costliest check here uses about 0.25 (0.28 on torch 2.4): under
# this load it takes about 0.8 s of wall-clock time, past a limit that counted the clock.
LIMIT_S = 0.7

DEVICE = "follows_device"
CORRECT = [
    ("layernorm", "solutions", DEVICE),
    ("rmsnorm", "solutions", DEVICE),
    ("groupnorm", "solutions", DEVICE),
    ("droppath", "solutions", DEVICE),
    ("layernorm-backward", "solutions", DEVICE),
    ("batchnorm-backward", "solutions", f"{DEVICE} or gradcheck"),
    ("batchnorm", "solutions", f"{DEVICE} or several_steps"),
    ("dropout", "solutions", f"{DEVICE} or keep_fraction"),
    ("prepost-norm", "solutions", f"{DEVICE} or gradients_match"),
    ("syncbatchnorm", "solutions", f"{DEVICE} or matches_batchnorm_on_the_global_batch"),
    ("layernorm", CATALOGUE / "layernorm" / "ok_var_mean_flatten.py", f"{DEVICE} or forward"),
    ("rmsnorm", CATALOGUE / "rmsnorm" / "ok_flatten_vector_norm.py", f"{DEVICE} or forward"),
]


@pytest.fixture
def busy_core(warm_grader: server.Client) -> Iterator[None]:
    """The grading server confined to one core (what it forks inherits that), and BUSY
    processes computing on that core, until the test ends. Without CPU affinity (not Linux),
    the busy processes run wherever the system puts them."""
    pid = warm_grader.process.pid
    pinning = hasattr(os, "sched_setaffinity")
    cores = os.sched_getaffinity(pid) if pinning else set()
    one = {min(cores)} if pinning else set()
    busy: list[subprocess.Popen] = []
    try:
        if pinning:
            os.sched_setaffinity(pid, one)
        for _ in range(BUSY):
            busy.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
            if pinning:
                os.sched_setaffinity(busy[-1].pid, one)
        yield
    finally:
        for process in busy:
            process.kill()
            process.wait()
        if pinning:
            os.sched_setaffinity(pid, cores)


def checks(report: dict) -> str:
    return "\n".join(f"  {c['outcome']:8} {c['name']}: {c['message']}" for c in report["checks"])


def test_a_busy_machine_changes_no_verdict(busy_core: None, grade) -> None:
    for kata, impl, selection in CORRECT:
        limit = f"--timeout={LIMIT_S}"
        report, output, code = grade(kata, impl, limit, "--device", "cpu", "-k", selection)
        assert code == 0, f"{kata}, {impl}: exit {code} under load\n{output}"
        assert report["passed"] == report["total"] > 0, f"{kata}, {impl}:\n{checks(report)}"
    # The other way: a loop in the learner's code is still theirs, told with its line.
    loop = CATALOGUE / "broken" / "infinite_loop.py"
    report, output, code = grade("layernorm", loop, "--timeout=0.2", "--device", "cpu")
    assert code == 1 and "could not grade" not in output, output
    assert "did not finish in time" in output and f"{loop.name} line" in output, output
    timeouts = [c for c in report["checks"] if c["kind"] == "timeout"]
    assert len(timeouts) == 2 and report["stopped"], checks(report)


def test_a_loop_is_caught_where_signals_are_not_used(grade) -> None:
    # Windows has no interval timers: a watchdog thread times the check there.
    loop = CATALOGUE / "broken" / "infinite_loop.py"
    method = "--timeout-method=thread"
    report, output, code = grade("layernorm", loop, "--timeout=0.3", method)
    assert code == 1 and "did not finish in time" in output, output
    assert f"{loop.name} line" in output and report["stopped"], output
    report, output, code = grade("layernorm", "solutions", method)
    assert code == 0 and report["strict_solved"], output


# -- the evidence: whose code a stack is in -------------------------------------------------


def test_a_stuck_process_says_where_it_is(tmp_path: Path) -> None:
    # What the runner and the SyncBatchNorm ranks ask a process before they stop it.
    loop = tmp_path / "mine.py"  # outside the grader, the suites and the libraries: a learner's
    loop.write_text(
        "import sys\nfrom pathlib import Path\n"
        "from norm_katas.runtime.limits import register_dump\n"
        "dump = register_dump(Path(sys.argv[1]))\nprint('ready', flush=True)\n"
        "while True:\n    pass\n"
    )
    env = {**os.environ, "PYTHONPATH": str(registry.ROOT)}
    stack = tmp_path / "stack.txt"
    process = subprocess.Popen(
        [sys.executable, str(loop), str(stack)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        frames = limits.dump_stack(process.pid, stack, wait_s=60)
    finally:
        process.kill()
        process.wait()
    assert frames is not None, "no faulthandler dump"
    site = limits.learner_site(frames)
    # At the loop, or just after announcing itself (line 5).
    assert site is not None and Path(site.file) == loop and site.line in (5, 6, 7), frames


def test_time_in_an_import_torch_makes_is_not_the_learners(tmp_path: Path) -> None:
    mine = str(tmp_path / "mine.py")
    torch_py = str(Path(torch.__file__).parent / "_subclasses" / "fake_tensor.py")
    frozen = "<frozen importlib._bootstrap>"
    learner = limits.Frame(mine, 12, "forward")
    # Running the learner's code, directly or through torch: theirs.
    assert limits.learner_site([learner]) == limits.Site(mine, 12)
    assert limits.learner_site([limits.Frame(torch_py, 40, "dispatch"), learner])
    # Importing what the learner's own line imports: theirs too.
    assert limits.learner_site([limits.Frame(frozen, 1, "_find_and_load"), learner])
    # torch importing a module on first use, under the learner's call: the grader's setting up.
    lazy = [limits.Frame(frozen, 1, "_find_and_load"), limits.Frame(torch_py, 40, "dispatch")]
    assert limits.learner_site([*lazy, learner]) is None
    # Only the grader, the suites and torch on the stack: not the learner's.
    suite = str(registry.ROOT / "tests" / "test_layernorm.py")
    assert (
        limits.learner_site([limits.Frame(torch_py, 40, "x"), limits.Frame(suite, 9, "t")]) is None
    )


def test_a_kernel_past_its_time_in_triton_s_interpreter_is_not_called_a_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A tl.reduce with a combine function of the learner's runs element by element in the
    # interpreter: the advice names the engine, not only an endless loop.
    mine = limits.Frame(str(tmp_path / "mine.py"), 26, "_combine")
    interpreter = limits.Frame("/x/site-packages/triton/runtime/interpreter.py", 900, "reduce")
    budget = limits.Budget(1.0, "test_x")
    monkeypatch.setattr(budget, "_used", lambda: (1.5, 1.5))
    try:
        slow = budget._verdict([mine, interpreter, mine])
        loop = budget._verdict([mine])
    finally:
        budget.close()
    assert limits.TRITON_SLOW in str(slow) and "infinite loop" not in str(slow), slow
    assert "An infinite loop" in str(loop) and limits.TRITON_SLOW not in str(loop), loop


def test_a_grading_that_stalls_is_told_by_where_it_was(tmp_path: Path) -> None:
    import io

    mine = tmp_path / "layernorm.py"
    mine.write_text("def forward(x):\n    return torch_op_that_never_returns(x)\n")
    suite = limits.Frame(str(registry.ROOT / "tests" / "test_layernorm.py"), 9, "test_x")
    out = io.StringIO()
    stalled = parent.Stalled(300, [limits.Frame(str(mine), 2, "forward"), suite])
    assert parent._stalled(stalled, out) == parent.NOT_SOLVED
    assert f"{mine.name} line 2: return torch_op_that_never_returns(x)" in out.getvalue()
    for frames in ([suite], None):  # the grader's own work, or nowhere known
        out = io.StringIO()
        assert parent._stalled(parent.Stalled(300, frames), out) == parent.GRADER_FAILED
        assert "not with your code" in out.getvalue(), out.getvalue()


def test_a_timeout_says_waiting_or_looping_by_the_cpu_it_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Idle (a sleep, an event, input) is told apart from busy (a loop), in the check's message,
    at import and when the run stops: never "does it sleep?" and then "it loops forever"."""
    from types import SimpleNamespace

    from norm_katas.engine import learners, plugin

    mine = limits.Frame(str(tmp_path / "mine.py"), 7, "forward")
    budget = limits.Budget(1.0, "test_x", method="thread")  # no watchdog: never started
    verdicts = {}
    for busy, used in ((True, (1.0, 1.5)), (False, (0.1, budget.wall_s))):
        monkeypatch.setattr(budget, "_used", lambda used=used: used)
        verdicts[busy] = budget._verdict([mine])
        assert isinstance(verdicts[busy], limits.TimedOut) and verdicts[busy].busy is busy
    assert "sleep, or wait for input or a lock" in str(verdicts[False])
    assert "infinite loop" in str(verdicts[True])

    for busy, says in ((True, "loop forever"), (False, "sleep, or wait for input or a lock")):
        error = verdicts[busy]
        monkeypatch.setattr(
            learners, "load_file", lambda *a, error=error: (_ for _ in ()).throw(error)
        )
        loaded = learners.Learners().load(registry.get("layernorm"), tmp_path / "mine.py")
        assert f"Does top-level code {says}?" in str(loaded), loaded

    for kinds, interpreted, says in (
        ([True, True], False, "seems to loop forever;"),
        ([False, False], False, "seems to wait forever (a sleep, or a wait for input or a lock)"),
        ([False, True], False, "seems never to finish"),
        ([True, True], True, "seems to loop forever, or to be too slow for Triton's interpreter"),
    ):
        grading = SimpleNamespace(
            timeouts=0, busy_timeouts=0, interpreted_timeouts=0,
            session=SimpleNamespace(shouldstop=None), report=SimpleNamespace(stopped=None),
        )  # fmt: skip
        for busy in kinds:
            plugin.Grading._count_timeout(grading, busy, interpreted)  # type: ignore[arg-type]
        assert says in grading.report.stopped, grading.report.stopped


def test_the_grader_overrunning_a_lowered_limit_names_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The grader's own work overran a check's limit: a machine too busy at the default, the
    learner's --timeout where it lowered the limit, never the learner's code."""
    from norm_katas.engine.report import Report
    from norm_katas.engine.request import CHECK_TIMEOUT_S, Request

    said = {}
    for cpu_s in (CHECK_TIMEOUT_S, 0.05):
        budget = limits.Budget(cpu_s, "test_x", method="thread")  # no watchdog: never started
        monkeypatch.setattr(budget, "_used", lambda cpu_s=cpu_s: (3 * cpu_s, 3 * cpu_s))
        assert budget._verdict([]) is None  # nothing of the learner's: the grader's work, once
        error = budget._verdict([])
        assert isinstance(error, limits.GraderTooSlow), error
        said[cpu_s] = str(error)
    assert "The machine is too busy" in said[CHECK_TIMEOUT_S], said
    assert "--timeout 0.05 is less than the grader needs" in said[0.05], said
    assert "too busy" not in said[0.05], said

    kata = registry.get("layernorm")
    for timeout, whose in (
        (CHECK_TIMEOUT_S, "This is a problem with the grader or its environment, not with your"),
        (0.05, "Not a problem with your code: the grader, its environment, or a --timeout of 0.05"),
    ):
        report = Report(kata.name, kata.title, "mine.py", "cpu", [])
        report.finished, report.grader_errors = True, [said[timeout]]
        request = Request.parse(kata, ["--impl", "solutions", f"--timeout={timeout}"])
        out = io.StringIO()
        assert parent._verdict(1, report, request, "", out) == parent.GRADER_FAILED
        assert whose in out.getvalue(), out.getvalue()
