"""The `ranks` fixture of the test-writing mode: a learner's test runs a function on the ranks
of a torch.distributed process group, as a test of SyncBatchNorm must.

    outs = ranks(step, world_size=2)

runs step(rank, world_size) on each rank, every one a process forked from the test's own: step
may be any function, a closure over the test's tensors or a lambda, since nothing of it is
pickled. Each rank joins the default process group (gloo, on the loopback interface, its
store a file in the scratch folder) before step runs, and leaves only once every rank is done.
What the ranks return comes back in rank order, tensors detached (a rank's autograd graph
stays there).

A rank that raises fails the call with its error (RankFailed). Ranks that stop making progress
(a collective some rank never joins: the others wait for it forever) are stopped, and the call
fails as hung (RanksHung): waiting is judged by the ranks' CPU time, so a busy machine, which
only slows them, never looks like a hang. Each rank has the test's limit of CPU time.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import pickle
import resource
import select
import signal
import time
import traceback
from pathlib import Path
from typing import Any

from norm_katas.runtime.limits import process_cpu
from norm_katas.runtime.processes import loopback_interface

# No rank still running has used any CPU for this long: they wait for each other.
IDLE_S = 1.0
# Where a process's CPU time cannot be read (not Linux): waited for this long at most.
WALL_S = 60.0
HUNG = "one that only some ranks call, or that they call in another order"
# After a rank's error, how long the others get to send theirs (a peer's may be the cause).
GRACE_S = 0.5
# What a rank's collective raises when a peer's process ended: a consequence, not a cause.
CONSEQUENCES = ("Connection reset", "Connection closed", "Broken pipe", "Read error", "peer")


class RankFailed(AssertionError):
    """A rank raised, or ended, inside the function the test ran on the ranks."""


class RanksHung(AssertionError):
    """The ranks stopped making progress: a collective that not every rank joined."""


class Ranks:
    """The fixture's value: call it with the function and the number of ranks."""

    def __init__(self, scratch: Path, cpu_limit: float, tests_file: Path | None = None) -> None:
        self.scratch, self.cpu_limit, self.calls = scratch, cpu_limit, 0
        self.tests_file = str(tests_file) if tests_file is not None else None

    def __call__(self, fn: Any, world_size: int = 2) -> list[Any]:
        """fn(rank, world_size) on each of world_size ranks; what each returned, by rank."""
        if not isinstance(world_size, int) or not 1 <= world_size <= 8:
            raise ValueError(f"world_size must be an int from 1 to 8, not {world_size!r}")
        self.calls += 1
        store = self.scratch / f"ranks-store-{os.getpid()}-{self.calls}"
        started: list[tuple[int, int]] = []  # (pid, read end of its pipe)
        try:
            for rank in range(world_size):
                read, write = os.pipe()
                pid = os.fork()
                if pid == 0:  # the rank: never returns
                    os.close(read)
                    _rank_main(fn, rank, world_size, store, write, self.cpu_limit, self.tests_file)
                os.close(write)
                started.append((pid, read))
            return _gather(started)
        finally:
            for pid, read in started:
                with contextlib.suppress(OSError):
                    os.close(read)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
            with contextlib.suppress(OSError):
                store.unlink()


def _rank_main(
    fn: Any, rank: int, size: int, store: Path, out: int, cpu_limit: float, tests: str | None
) -> None:
    """One rank: join the group, run fn, send back ("ok", value) or ("error", text), the
    text naming the line of the test file where the error passed last."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        seconds = max(1, int(cpu_limit + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
        import torch
        import torch.distributed as dist

        if (name := loopback_interface()) is not None:  # gloo on loopback, never a LAN address
            os.environ["GLOO_SOCKET_IFNAME"] = name
        dist.init_process_group(
            "gloo", store=dist.FileStore(str(store), size), rank=rank, world_size=size,
            timeout=datetime.timedelta(seconds=60),
        )  # fmt: skip
        value = fn(rank, size)
        from torch.utils._pytree import tree_map

        value = tree_map(lambda v: v.detach() if isinstance(v, torch.Tensor) else v, value)
        data = pickle.dumps(("ok", value))
    except BaseException as e:  # the learner's code: any exception, an assert, a pytest.fail
        mine = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == tests]
        line = f" (line {mine[-1].lineno} of the test file)" if mine else ""
        text = str(e).strip().splitlines()
        data = pickle.dumps(("error", f"{type(e).__name__}{line}: {text[0] if text else ''}"))
        code = 1
    try:
        with os.fdopen(out, "wb") as pipe:
            pipe.write(data)
        if code == 0:
            # Answered; wait until every rank is done before exiting: a rank that returned at
            # once (nothing to synchronise) and exited would break a slower peer's joining of
            # the group, or its last collective, no one's mistake. The parent stops it after.
            dist.barrier()
    finally:
        os._exit(code)


def _gather(started: list[tuple[int, int]]) -> list[Any]:
    """Read every rank's answer; raise RankFailed or RanksHung as the ranks went."""
    data = {read: bytearray() for _, read in started}
    open_ = {read: pid for pid, read in started}
    cpu = {pid: process_cpu(pid) for pid, _ in started}
    progress, since = time.monotonic(), time.monotonic()
    answers: dict[int, tuple[str, Any]] = {}
    failed: float | None = None  # when the first rank's error came
    while open_:
        ready, _, _ = select.select(list(open_), [], [], 0.05)
        for read in ready:
            chunk = os.read(read, 1 << 16)
            if chunk:
                data[read] += chunk
                continue
            pid = open_.pop(read)
            answers[pid] = _answer(pid, bytes(data[read]))
        now = time.monotonic()
        if failed is None and any(kind == "error" for kind, _ in answers.values()):
            failed = now
        if failed is not None and now - failed > GRACE_S:
            break  # the others wait for the failed rank forever: its error is the cause
        for pid in open_.values():
            used = process_cpu(pid)
            if used is None:
                continue
            if cpu[pid] is None or used > cpu[pid]:
                cpu[pid], progress = used, now
        readable = any(value is not None for value in cpu.values())
        if (readable and now - progress > IDLE_S) or now - since > WALL_S:
            waiting = sorted(i for i, (pid, _) in enumerate(started) if pid in open_.values())
            raise RanksHung(
                f"rank{'s' if len(waiting) > 1 else ''} {', '.join(map(str, waiting))} never "
                f"finished: waiting in a collective that not every rank joined ({HUNG})"
            )
    errors = [(rank, answers[pid][1]) for rank, (pid, _) in enumerate(started)
              if answers.get(pid, ("ok",))[0] == "error"]  # fmt: skip
    if errors:
        # A rank whose peer ended first fails in gloo's transport: the peer's error is the cause.
        errors.sort(key=lambda error: _consequence(error[1]))
        rank, text = errors[0]
        if not _consequence(text):
            raise RankFailed(f"rank {rank} raised {text}")
        waiting = [r for r, _ in errors]
        raise RanksHung(
            f"rank{'s' if len(waiting) > 1 else ''} {', '.join(map(str, waiting))} waited in a "
            f"collective that not every rank joined: the other ranks had returned ({HUNG})"
        )
    return [answers[pid][1] for pid, _ in started]


def _consequence(text: str) -> bool:
    return text.startswith("RuntimeError") and any(word in text for word in CONSEQUENCES)


def _answer(pid: int, data: bytes) -> tuple[str, Any]:
    """What a rank sent, or why it sent nothing (it ended: a crash, its CPU limit)."""
    if data:
        with contextlib.suppress(Exception):
            return pickle.loads(data)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
        return ("error", "nothing: it ran out of its CPU time (an endless loop?)")
    return ("error", f"nothing: the process ended ({status})")
