"""The test-writing mode: the learner's tests of a kata's layer, run against the reference
solution, the catalogue's correct and wrong layers and the reference's mutants
(content.candidates), and graded by what they catch.

`prove` splits the candidates between child processes forked from this one (child.run), each
in its own scratch folder and process group, and reads what each test did on each candidate
from the lines they write. A child that ends abruptly (a crash, os._exit) ends on the candidate
it was testing: that candidate counts as failing there, and a new child goes on with the rest.
The verdict (verdict.Verdict) is printed by report.print_verdict.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from norm_katas.content import candidates, registry
from norm_katas.engine.proving import child
from norm_katas.engine.proving.verdict import Run, Verdict
from norm_katas.engine.request import NOT_SOLVED
from norm_katas.engine.runner.parent import Graded
from norm_katas.runtime import processes

if TYPE_CHECKING:
    from collections.abc import Callable

    from norm_katas.engine.request import Request


def grade(
    request: Request, *, out: TextIO | None = None, cancel: Callable[[], bool] | None = None
) -> Graded:
    """Grade the learner's tests and print the report to `out`; Graded.proof holds the
    verdict (None for an untouched stub, which tests nothing yet)."""
    from norm_katas.content import pristine
    from norm_katas.engine.proving.report import print_verdict

    out = out or sys.stdout  # the report, as a layer's checklist, goes to standard output
    shown = registry.shown(request.file)
    if pristine.is_untouched_tests(request.kata, request.file):
        print(
            f"Not started yet? {shown} is the stub as handed out: write your tests of "
            f"{request.kata.title} there, each a function that takes the layer as `kata`, "
            "then grade again.",
            file=out,
        )
        return Graded(NOT_SOLVED, None)
    if found := child.imports_of(request.file):
        line, statement = found[0]
        print(
            f"{shown} line {line} imports what your tests may not use ({statement}): they get "
            "the layer under test as the `kata` argument and test it with torch and pytest "
            "alone.",
            file=out,
        )
        return Graded(NOT_SOLVED, None)
    verdict = prove(request, cancel=cancel)
    if verdict is None:
        return Graded(NOT_SOLVED, None, cancelled=True)
    code = print_verdict(verdict, request, out)
    out.flush()
    if request.report_json is not None:
        try:
            request.report_json.write_text(json.dumps(verdict.to_json(), indent=1) + "\n")
        except OSError as e:
            print(f"The verdict was not written to {request.report_json}: {e}", file=out)
    return Graded(code, None, proof=verdict)


# No line from a child for this long (a hang that no test's limit interrupts): it is stopped,
# and the candidate it was on counts as failing.
STALL_S = 120.0
# Candidates a child takes before another child is worth its start (a fork, and pytest's
# start and collection of the file: tens of milliseconds): a few cheap layers run sooner in one.
PER_CHILD = 24
# Where layers are slow (a test taking a good part of a second: a Triton kernel in the
# interpreter, SyncBatchNorm on ranks), four a child, so that a few of them use every core.
PER_CHILD_SLOW = 4
SLOW_LAYER_S = 0.25  # a correct layer that took this long, every test run on it, is slow


def workers() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(4, cores or 1))


def prove(
    request: Request,
    *,
    cancel: Callable[[], bool] | None = None,
    n_workers: int | None = None,
) -> Verdict | None:
    """Run the learner's tests (request.file) against every candidate of request.kata; the
    verdict, or None when `cancel` said stop."""
    _warm(request)
    found = candidates.for_kata(request.kata)
    if not request.mutants:
        found = [c for c in found if c.kind != "mutant"]
    run = Run(found)
    n = n_workers or workers()
    # The correct layers first: a test file that does not load, or that hangs or crashes on a
    # correct layer, would do the same on every other, and is told at once.
    correct = [i for i, c in enumerate(found) if c.kind == "correct"]
    wrong = [i for i, c in enumerate(found) if c.kind != "correct"]
    with tempfile.TemporaryDirectory(prefix="norm-katas-tests-", ignore_cleanup_errors=True) as t:
        slow = request.kata.triton  # interpreted: slow, before any is timed
        for phase in (correct, wrong):
            began = time.monotonic()
            per_child = PER_CHILD_SLOW if slow else PER_CHILD
            if not _run_phase(request, found, run, phase, n, per_child, Path(t), cancel):
                return None
            if run.load_error or run.grader_errors or run.fatal:
                break
            slow = slow or time.monotonic() - began > SLOW_LAYER_S * max(1, len(phase))
    return run.verdict(request)


def _warm(request: Request) -> None:
    """Here, once, what each child would otherwise import on its first use: the first
    torch.testing.assert_close imports torch.distributed.tensor (most of a second); and, in a
    process of the grader's own, a Triton kata's engine (a child starts its own otherwise)."""
    import torch

    from norm_katas.engine.runner import warm

    torch.testing.assert_close(torch.zeros(1), torch.zeros(1))
    if warm.WARMED[0] and request.kata.triton:
        child.start_engine(request.kata.stem)  # a failure: each child reports it as the grader's


def _run_phase(
    request: Request, found: list[candidates.Candidate], run: Run, phase: list[int], n: int,
    per_child: int, tmp: Path, cancel: Callable[[], bool] | None,
) -> bool:  # fmt: skip
    """Run the candidates `phase` in up to n children, per_child candidates before another
    child starts; False when `cancel` said stop."""
    n = max(1, min(n, -(-len(phase) // per_child)))
    shards = [phase[i::n] for i in range(n)]
    pending = {w: shard for w, shard in enumerate(shards) if shard}
    running: dict[int, tuple[int, list[int], Path, float]] = {}
    try:
        while pending or running:
            for w in list(pending):
                indices = pending.pop(w)
                log = tmp / f"log{len(run.logs)}.jsonl"
                run.logs.append(log)
                pid = _start(request, found, indices, tmp / f"work{w}", log, run.alarming())
                running[pid] = (w, indices, log, time.time())
            if cancel is not None and cancel():
                return False
            for pid, (w, indices, log, since) in list(running.items()):
                done, status = os.waitpid(pid, os.WNOHANG)
                stalled = False
                if not done:
                    with contextlib.suppress(OSError):
                        since = max(since, log.stat().st_mtime)
                    if time.time() - since < STALL_S:
                        continue
                    processes.kill_group(pid)
                    stalled, status = True, -signal.SIGKILL
                running.pop(pid)
                code = status if stalled else os.waitstatus_to_exitcode(status)
                if rest := run.read(log, indices, code, stalled):
                    pending[w] = rest
            time.sleep(0.005)
    finally:
        for pid in running:
            processes.kill_group(pid)
    return True


def _start(
    request: Request, found: list[candidates.Candidate], indices: list[int], scratch: Path,
    log: Path, alarming: set[str],
) -> int:  # fmt: skip
    """A child that runs the learner's tests on the candidates `indices`, writing to `log`:
    forked from this process where that is safe, else a fresh interpreter (`python -m
    norm_katas _prove JOB`), as a layer's grading is. Its pid; it leads its process group."""
    scratch.mkdir(parents=True, exist_ok=True)
    log.touch()
    job = {
        "tests_file": str(request.file), "stem": request.kata.stem, "scratch": str(scratch),
        "log": str(log), "timeout": request.timeout, "alarming": sorted(alarming),
        "sources": [found[i].source for i in indices],
        "wrong": [found[i].kind != "correct" for i in indices],
    }  # fmt: skip
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    if not processes.fork_is_safe():
        path = log.with_suffix(".job.json")
        path.write_text(json.dumps(job), encoding="utf-8")
        child_process = subprocess.Popen(
            [sys.executable, "-m", "norm_katas", "_prove", str(path)], cwd=registry.ROOT,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        _SPAWNED.append(child_process)  # reaped by os.waitpid; kept so that Popen stays quiet
        return child_process.pid
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with torch's idle thread
        pid = os.fork()
    if pid == 0:
        code = 3
        try:
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            code = run_job(job)
        finally:
            os._exit(code)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)
    return pid


_SPAWNED: list[subprocess.Popen] = []


def run_job(job: dict) -> int:
    """What a child does (forked, or `python -m norm_katas _prove`): the tests on its
    candidates, then a last line saying that it finished, or what went wrong in the grader."""
    log = Path(job["log"])
    try:
        code = child.run(
            Path(job["tests_file"]), job["sources"], job["wrong"], job["stem"],
            Path(job["scratch"]), log, float(job["timeout"]), set(job["alarming"]),
        )  # fmt: skip
        with log.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"finished": True}) + "\n")
        return code
    except BaseException as e:
        with contextlib.suppress(Exception), log.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"grader_error": processes.where(e)}) + "\n")
        return 3
