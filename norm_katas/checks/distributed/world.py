"""The ranks, seen from the grading process: start them, run a function on all, stop them.

`World(impl, size)` starts `size` processes on 127.0.0.1, joined by a gloo process group (nccl,
one GPU each, with `backend="nccl"`). They are forked from the grading process where that is
safe, so that torch is imported already and four ranks are up in a fraction of a second;
spawned otherwise (CUDA initialised, not Linux, NORM_KATAS_SPAWN set). Each rank (rank.py)
loads the learner's file by path, and works in a scratch folder of the world's. Every socket
the ranks listen on (the store's, gloo's) is on the loopback interface: no other machine can
reach them.

`World.run(fn, payloads)` runs `fn(module, ctx, payload)` on every rank (fn: a function at the
top level of an importable module) and brings back, per rank, a RankReport: what fn returned,
or what went wrong there (verdict.py turns that into a failure written for the learner).

A rank that is stuck for good (an endless loop) is killed with the others, and its successors
start afresh: before that, its stack says where it was (in the learner's code, it is the
learner's endless loop; anywhere else, the grader's problem). Ranks die with the grading
process (PR_SET_PDEATHSIG) and are killed by pid on close.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait as wait_for
from pathlib import Path
from typing import Any

from norm_katas.checks.distributed.rank import (
    MARGIN_S,
    NET_S,
    SETUP_S,
    WAIT_S,
    overdue,
    rank_main,
    recv,
    send,
)
from norm_katas.runtime.limits import Watch, dump_stack, learner_site
from norm_katas.runtime.processes import exit_status, fork_is_safe

# Every World still open in this process, so that the grading can stop them after the suite.
_OPEN: list[World] = []


def close_all() -> None:
    """Stop every world still open (the plugin calls this after each suite)."""
    while _OPEN:
        _OPEN[-1].close()


class WorldError(Exception):
    """The ranks could not be started: str() says why."""


@dataclass
class RankReport:
    """What one rank did in one run."""

    rank: int
    value: Any = None
    error: dict | None = None  # the learner's code raised: type, text, file, line, ...
    stuck: str | None = None  # a collective could not complete (see Tracker.before)
    mistake: str | None = None  # fn found the learner's code wrong (see Mistake)
    calls: list[dict] = field(default_factory=list)
    phase: str = ""
    died: str | None = None  # the process ended, or did not answer in time
    # For a rank stopped as stuck: how it spent its time, and where it was (World._stop).
    hang: dict | None = None


class World:
    """`size` ranks with the learner's file loaded, reused by every run until one goes wrong."""

    def __init__(
        self, impl: Path, size: int, *, module_name: str, backend: str = "gloo",
        groups: dict[str, list[int]] | None = None,
    ) -> None:  # fmt: skip
        self.impl, self.size, self.backend = Path(os.path.abspath(impl)), size, backend
        self.module_name, self.groups = module_name, groups or {}
        self.processes: list[Any] = []
        self.conns: list[Any] = []
        self.runs = 0
        self.logs = Path(tempfile.mkdtemp(prefix="norm-katas-ranks-"))
        self.scratch = self.logs / "work"  # the ranks' working directory
        self.scratch.mkdir()
        # gloo only: nccl initialises CUDA, which a forked child cannot use
        fork = backend == "gloo" and fork_is_safe()
        self.start_method = "fork" if fork else "spawn"
        _OPEN.append(self)
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        context = multiprocessing.get_context(self.start_method)
        for rank in range(self.size):
            mine, theirs = context.Pipe()
            log = str(self.logs / f"rank{rank}.log")
            args = (theirs, rank, self.size, str(self.impl), self.module_name, self.backend,
                    self.groups, log, os.getpid(), str(self.scratch))  # fmt: skip
            process = context.Process(target=rank_main, args=args, name=f"norm-katas-rank{rank}")
            with warnings.catch_warnings():  # 3.12+ warns of fork with threads: none is used
                warnings.simplefilter("ignore", DeprecationWarning)
                process.start()
            theirs.close()
            self.processes.append(process)
            self.conns.append(mine)
        deadline = time.monotonic() + SETUP_S
        first = self._answer(0, deadline)
        if first[0] != "port":
            raise WorldError(self._setup_failure(0, first))
        for conn in self.conns[1:]:
            send(conn, first[1])
        for rank in range(self.size):
            answer = self._answer(rank, deadline)
            if answer[0] != "ready":
                raise WorldError(self._setup_failure(rank, answer))

    def _answer(self, rank: int, deadline: float) -> tuple:
        conn, process = self.conns[rank], self.processes[rank]
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return ("failed", f"rank {rank} did not start within {SETUP_S:g} s")
            ready = wait_for([conn, process.sentinel], timeout=left)
            if conn in ready:
                try:
                    return recv(conn)
                except EOFError:
                    pass
            if ready:
                process.join(1)
                return ("failed", f"rank {rank} ended ({exit_status(process.exitcode)})")

    def _setup_failure(self, rank: int, answer: tuple) -> str:
        text = str(answer[1])
        if text.startswith("Traceback") or "ended (" in text or "did not start" in text:
            return (
                f"the grader could not start {self.size} ranks with torch.distributed "
                f"({self.backend} on 127.0.0.1): {text.strip().splitlines()[-1]}"
                f"{self._log_tail(rank)}"
            )
        return text  # the learner's file did not load (LoadError): that message says it all

    def _log_tail(self, rank: int) -> str:
        with contextlib.suppress(OSError):
            text = (self.logs / f"rank{rank}.log").read_text(errors="replace").strip()
            if text:
                return "\nThe rank's last output:\n  " + "\n  ".join(text.splitlines()[-6:])
        return ""

    @property
    def alive(self) -> bool:
        return bool(self.processes) and all(p.is_alive() for p in self.processes)

    def run(self, fn: Callable[..., Any], payloads: list[Any]) -> list[RankReport]:
        """Run fn(module, ctx, payload) on every rank; one RankReport per rank."""
        self.runs += 1
        tag = f"run{self.runs}"
        where = (fn.__module__, fn.__qualname__)
        reports = {}
        try:
            watches = {rank: Watch(process.pid) for rank, process in enumerate(self.processes)}
            for rank, conn in enumerate(self.conns):
                send(conn, ("run", tag, where, payloads[rank]))
            pending = dict(enumerate(self.conns))
            while pending:
                sentinels = {self.processes[r].sentinel: r for r in pending}
                ready = wait_for([*pending.values(), *sentinels], timeout=0.1)
                for rank, conn in list(pending.items()):
                    if conn in ready:
                        with contextlib.suppress(EOFError):
                            data = recv(conn)
                            reports[rank] = RankReport(rank, **data)
                            del pending[rank]
                for sentinel, rank in sentinels.items():
                    if sentinel in ready and rank in pending:
                        self.processes[rank].join(1)
                        status = exit_status(self.processes[rank].exitcode)
                        reports[rank] = RankReport(rank, died=f"ended abruptly ({status})")
                        del pending[rank]
                if any(r.died and r.hang is None for r in reports.values()):
                    break  # the others may wait for it at a collective: do not wait for them
                # Stuck: computing far longer than a step takes, or not even computing. The
                # others go on, to report how they waited for it.
                for rank in list(pending):
                    if over := overdue(watches[rank], WAIT_S + MARGIN_S, NET_S + MARGIN_S):
                        reports[rank] = self._stuck(rank, *over)
                        del pending[rank]
            for rank in pending:  # waiting for a rank that died
                reports[rank] = RankReport(rank, died="did not finish: stopped with the others")
        except BaseException:
            self.close(kill=True)  # a pytest-timeout (or Ctrl-C) mid-run: unusable ranks
            raise
        if any(r.died for r in reports.values()):
            for report in reports.values():
                if report.died and not report.died.startswith("did not finish"):
                    report.died += self._log_tail(report.rank)
            self.close(kill=True)
        return [reports[r] for r in range(self.size)]

    def _stuck(self, rank: int, cpu: float | None, wall: float) -> RankReport:
        """A stuck rank's report, with where it is now (it is stopped later, with the rest)."""
        frames = dump_stack(self.processes[rank].pid, self.logs / f"rank{rank}.stack")
        site = learner_site(frames) if frames else None
        hang = {
            "cpu": cpu, "wall": wall, "known": frames is not None,
            "site": str(site) if site else None, "where": str(frames[0]) if frames else None,
        }  # fmt: skip
        return RankReport(rank, died="did not finish", phase="", hang=hang)

    def close(self, *, kill: bool = False) -> None:
        """Stop the ranks: politely (unless kill), then by pid; their ports go with them."""
        if self in _OPEN:
            _OPEN.remove(self)
        for conn in self.conns:
            with contextlib.suppress(Exception):
                send(conn, ("exit",))
        deadline = time.monotonic() + (0 if kill else 2)
        for process in self.processes:
            with contextlib.suppress(Exception):
                process.join(max(deadline - time.monotonic(), 0))
        for process in self.processes:
            if process.is_alive():
                with contextlib.suppress(Exception):
                    process.kill()
                    process.join(5)
        for conn in self.conns:
            with contextlib.suppress(Exception):
                conn.close()
        self.processes, self.conns = [], []
        shutil.rmtree(self.logs, ignore_errors=True)  # the logs, and what the ranks wrote
