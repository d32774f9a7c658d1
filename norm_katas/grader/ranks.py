"""Ranks joined by torch.distributed, for the checks of a distributed layer (SyncBatchNorm).

`World(impl, size)` starts `size` processes on 127.0.0.1, joined by a gloo process group (nccl,
one GPU each, with `backend="nccl"`). They are forked from the grading process where that is
safe, so that torch is imported already and four ranks are up in a fraction of a second;
spawned otherwise (CUDA initialised, not Linux, NORM_KATAS_SPAWN set). Each rank loads the
learner's file by path, and works in a scratch folder of the world's. Every socket the ranks
listen on (the store's, gloo's) is on the loopback interface: no other machine can reach them.
`World.run(fn, payloads)` runs `fn(module, ctx, payload)` on every rank (fn: a function at the
top level of an importable module, the suite) and brings back, per rank, what fn returned or
what went wrong there; `expect_ranks_ok` turns the latter into a failure written for the
learner.

Every collective the learner's code calls through torch.distributed (dist.all_reduce,
torch.distributed.nn.functional.*, ...) is stopped on its way in: the ranks first compare notes
in the TCPStore (which collective, called from which line, in which phase of the step, on what
shape), and only when all of them are there with the same call does the real one run. A rank
that skips a collective, or calls another one, is then reported at once as the deadlock it
would be ("rank 1 never joined the all_reduce that rank 0 called in forward ..."), instead of
hanging, and the process group stays usable for the next step. A rank that is stuck for good
(an endless loop) is killed with the others, and its successors start afresh. Ranks die with the
grading process (PR_SET_PDEATHSIG) and are killed by pid on close.

Waiting is measured in the CPU time of the rank waited for, not in wall-clock time, so that a
busy machine, which slows a rank down, never makes it look stuck: a rank that computes for
WAIT_S seconds of CPU without reaching the collective loops. One that uses no CPU is waited
for NET_S (it waits for something itself). Before a stuck rank is killed, its stack says where
it was: in the learner's code, it is the learner's endless loop; anywhere else, the grader's
problem. (Where a process's CPU time cannot be read, not on Linux, WAIT_S is wall-clock time.)
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import functools
import importlib
import inspect
import json
import multiprocessing
import os
import pickle
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait as wait_for
from pathlib import Path
from typing import Any

import torch

from norm_katas.grader.checks import cannot_grade, fail, fail_hung
from norm_katas.grader.limits import Watch, dump_stack, learner_site, register_dump
from norm_katas.grader.loader import LoadError, display_path, load_file
from norm_katas.grader.tracing import is_learner_code

# A rank waits at a collective for a peer that is neither there nor done until that peer has
# used this much CPU time meanwhile (the self-tests, which loop a rank on purpose, shorten it);
# after it and a margin of CPU time in one run, the parent stops a rank. NET_S: the same for a
# rank that uses no CPU, in wall-clock time.
WAIT_S = float(os.environ.get("NORM_KATAS_RANK_WAIT_S", "4"))
MARGIN_S = min(3.0, WAIT_S)
NET_S = max(30.0, 4 * WAIT_S)
SETUP_S = 60.0  # starting the ranks: spawned ones import torch first
PG_TIMEOUT_S = 30.0  # the process group's own timeout: a real collective that hangs anyway

# The collectives of torch.distributed, with the argument every rank must give the same shape
# (None: shapes may differ, or there is no tensor). What a rank sends is counted from it too.
COLLECTIVES: dict[str, str | None] = {
    "all_reduce": "tensor", "all_gather": "tensor", "all_gather_into_tensor": "input_tensor",
    "_all_gather_base": "input_tensor", "broadcast": "tensor", "reduce": "tensor",
    "gather": "tensor", "scatter": "tensor", "reduce_scatter": "output",
    "reduce_scatter_tensor": "input", "_reduce_scatter_base": "input",
    "all_gather_object": None, "all_gather_coalesced": None, "all_reduce_coalesced": None,
    "broadcast_object_list": None, "gather_object": None, "scatter_object_list": None,
    "all_to_all": None, "all_to_all_single": None, "barrier": None, "monitored_barrier": None,
}  # fmt: skip
_SENT = {"all_to_all": "input_tensor_list", "all_to_all_single": "input"}


class Stuck(BaseException):
    """A collective on this rank cannot complete. A BaseException, so that the learner's
    `except Exception` does not swallow it."""


class Mistake(Exception):
    """Raised by fn on a rank: str() is a learner-facing message (forward returned None, ...)."""


class WorldError(Exception):
    """The ranks could not be started: str() says why."""


# -- on each rank ---------------------------------------------------------------------------


def _is_library(filename: str) -> bool:
    """Code of torch, the standard library, the grader, the suites or this harness."""
    return not is_learner_code(filename)


def _site() -> tuple[str, int] | None:
    """The innermost frame of the learner's code on the stack: (file, line)."""
    frame = sys._getframe(2)
    while frame is not None:
        if not _is_library(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


class Tracker:
    """Records this rank's collectives and makes the ranks agree on each before it runs."""

    def __init__(self, store: Any, rank: int) -> None:
        self.store, self.rank = store, rank
        self.tag, self.phase_name = "", "setup"
        self.calls: list[dict] = []
        self.seq: dict[str, int] = {}
        self.stuck: str | None = None
        self.inside = False  # a collective running another (all_gather_object): pass through
        self.pids: dict[int, int] = {}
        store.set(f"pid/{rank}", str(os.getpid()))  # so that peers can see it compute

    def begin(self, tag: str) -> None:
        self.tag, self.phase_name = tag, "setup"
        self.calls, self.seq, self.stuck = [], {}, None

    def phase(self, name: str) -> None:
        self.phase_name = name
        self.store.set(f"{self.tag}/phase/{self.rank}", name)

    def end(self) -> None:
        self.store.set(f"{self.tag}/end/{self.rank}", self.phase_name)

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):
            return fn

        @functools.wraps(fn)
        def collective(*args: Any, **kwargs: Any) -> Any:
            if self.inside:
                return fn(*args, **kwargs)
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return fn(*args, **kwargs)  # torch says what is wrong with the arguments
            self.before(name, bound.arguments)
            self.inside = True
            try:
                return fn(*args, **kwargs)
            finally:
                self.inside = False

        return collective

    def before(self, name: str, arguments: dict[str, Any]) -> None:
        import torch.distributed as dist

        if self.stuck:
            raise Stuck(self.stuck)
        group = arguments.get("group")
        group = dist.group.WORLD if group is None else group
        try:
            members = list(dist.get_process_group_ranks(group))
        except Exception:
            return  # not a group torch knows: let torch say so
        tensor = arguments.get(COLLECTIVES[name] or "")
        sent = arguments.get(_SENT.get(name, COLLECTIVES[name] or ""))
        numel = sum(t.numel() for t in _tensors(sent))
        site = _site()
        call = {
            "name": name, "phase": self.phase_name, "group": members, "numel": numel,
            "site": list(site) if site else None,
            "shape": list(tensor.shape) if isinstance(tensor, torch.Tensor) else None,
            "dtype": str(tensor.dtype).removeprefix("torch.")
            if isinstance(tensor, torch.Tensor) else None,
        }  # fmt: skip
        if self.rank not in members:
            return  # torch ignores a collective of a group this rank is not in
        self.calls.append(call)
        key = ",".join(map(str, members))
        k = self.seq[key] = self.seq.get(key, 0) + 1
        self.store.set(f"{self.tag}/call/{key}/{k}/{self.rank}", json.dumps(call))
        pending = [r for r in members if r != self.rank]
        watches = {peer: Watch(self._pid(peer)) for peer in pending}
        pause = 0.0005  # short at first, as peers usually arrive within milliseconds
        while pending:
            for peer in list(pending):
                if self.store.check([f"{self.tag}/call/{key}/{k}/{peer}"]):
                    pending.remove(peer)
                    theirs = json.loads(self.store.get(f"{self.tag}/call/{key}/{k}/{peer}"))
                    if _what(theirs) != _what(call) or theirs["shape"] != call["shape"]:
                        self._stop(f"rank {peer} made another call as collective #{k}")
                elif self.store.check([f"{self.tag}/end/{peer}"]):
                    self._stop(f"rank {peer} finished without collective #{k}")
            for peer in pending:
                if (over := _overdue(watches[peer], WAIT_S, NET_S)) is not None:
                    self._stop(
                        f"rank {peer} neither joined the {name} that rank {self.rank} called in "
                        f"{call['phase']} nor finished its step, {_meanwhile(*over)} (it was "
                        f"last in {self._peer_phase(peer)}): an endless loop, or a collective "
                        "outside torch.distributed's functions that this rank never joined?"
                    )
            time.sleep(pause)  # and longer later, leaving the CPU to the ranks that compute
            pause = min(pause * 1.5, 0.02)

    def _pid(self, peer: int) -> int:
        if peer not in self.pids:
            self.pids[peer] = int(self.store.get(f"pid/{peer}"))
        return self.pids[peer]

    def _peer_phase(self, peer: int) -> str:
        key = f"{self.tag}/phase/{peer}"
        return self.store.get(key).decode() if self.store.check([key]) else "setup"

    def _stop(self, why: str) -> None:
        self.stuck = why
        raise Stuck(why)


def _overdue(watch: Watch, cpu_s: float, wall_s: float) -> tuple[float | None, float] | None:
    """(CPU, wall-clock) seconds of a process since the watch began, once it has used cpu_s of
    CPU time (computing all along) or wall_s in all (waiting for something); else None. Where
    its CPU time cannot be read (None), cpu_s of wall-clock time."""
    cpu, wall = watch.cpu(), watch.wall()
    if (wall >= cpu_s) if cpu is None else (cpu >= cpu_s or wall >= wall_s):
        return cpu, wall
    return None


def _meanwhile(cpu: float | None, wall: float) -> str:
    if cpu is None:
        return f"within {wall:.0f} s"
    if wall < NET_S:
        return f"though it ran for {cpu:.1f} s of CPU time in the meantime"
    return f"in {wall:.0f} s, though it was not computing ({cpu:.1f} s of CPU time)"


def _what(call: dict) -> tuple:
    """What makes two ranks' calls the same collective: name, phase of the step, call site."""
    return call["name"], call["phase"], tuple(call["site"] or ())


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _install(tracker: Tracker) -> None:
    """Route every collective of torch.distributed through the tracker, under both names."""
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d

    for name in COLLECTIVES:
        original = getattr(c10d, name, None)
        if original is None:
            continue
        wrapped = tracker.wrap(name, original)
        setattr(c10d, name, wrapped)
        if getattr(dist, name, None) is original:
            setattr(dist, name, wrapped)


@dataclass
class RankContext:
    """What fn gets besides the learner's module and its payload."""

    rank: int
    size: int
    device: torch.device
    groups: dict[str, Any]  # name -> process group (None where this rank is not a member)
    tracker: Tracker

    def phase(self, name: str) -> None:
        """Name what the rank does next ("forward (training step 1)"): messages quote it."""
        self.tracker.phase(name)

    def mark(self) -> int:
        return len(self.tracker.calls)

    def calls_since(self, mark: int) -> list[dict]:
        """The collectives this rank has called since mark(): name, phase, group, numel, ..."""
        return [dict(c) for c in self.tracker.calls[mark:]]


def _error(e: BaseException, learner: str) -> dict:
    """A learner-facing description of an exception: type, text and the learner's line."""
    frames = traceback.extract_tb(e.__traceback__)
    mine = [f for f in frames if not _is_library(f.filename)]
    own = [f for f in mine if Path(f.filename).resolve() == Path(learner).resolve()]
    frame = (own or mine or [None])[-1]
    return {
        "type": type(e).__name__,
        "text": str(e).strip().splitlines()[0] if str(e).strip() else "",
        "file": frame.filename if frame else None,
        "line": frame.lineno if frame else None,
        "code": (frame.line or "").strip() if frame else "",
        "exit": e.code if isinstance(e, SystemExit) else None,
        "traceback": "".join(traceback.format_exception(type(e), e, e.__traceback__, limit=-6)),
    }


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)  # the parent died before prctl took effect


def _quiet(log: str) -> None:
    """The learner's prints and torch's warnings go to the rank's log, not the checklist."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr = open(log, "a", buffering=1)  # noqa: SIM115


def _loopback() -> str | None:
    with contextlib.suppress(OSError):
        names = [name for _, name in socket.if_nameindex()]
        return next((n for n in ("lo", "lo0") if n in names), None)
    return None


def _store(conn: Any, rank: int, size: int, timeout: datetime.timedelta) -> Any:
    """The ranks' TCPStore, its server listening on 127.0.0.1 only.

    Given a host and port, torch's TCPStore server listens on every interface whatever the host
    (libuv's and the older backend alike bind the wildcard address): another machine could
    reach it. Handed a listening socket instead (master_listen_fd), it serves on that one, so
    rank 0 binds it to 127.0.0.1 on a free port, and says which. The older backend takes a
    socket on every torch from 2.4 on, so it is asked first (libuv's refuses one on 2.4, and
    logs an error that the rank's last output would show); libuv's if a later torch drops it.
    """
    import torch.distributed as dist

    if rank != 0:
        return dist.TCPStore("127.0.0.1", _recv(conn), size, False, timeout)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(size * 4)
        port = listener.getsockname()[1]
        for use_libuv in (False, True):
            try:
                store = dist.TCPStore(
                    "127.0.0.1", port, size, True, timeout, wait_for_workers=False,
                    master_listen_fd=listener.fileno(), use_libuv=use_libuv,
                )  # fmt: skip
                break
            except Exception:
                if use_libuv:
                    raise
        listener.detach()  # the store owns the descriptor now, and closes it
    _send(conn, ("port", port))
    return store


def _send(conn: Any, message: Any) -> None:
    # Plain pickle: torch's reductions for multiprocessing would share tensors through file
    # descriptors and start a helper thread; these tensors are small, copies are simpler.
    conn.send_bytes(pickle.dumps(message))


def _recv(conn: Any) -> Any:
    return pickle.loads(conn.recv_bytes())


def rank_main(
    conn: Any, rank: int, size: int, impl: str, module_name: str, backend: str,
    groups: dict[str, list[int]], log: str, parent: int, scratch: str,
) -> None:  # fmt: skip
    """A rank: join the group, load the learner's file, then run what the parent sends.

    It works in `scratch`, the world's empty folder: relative paths the learner's code writes
    land there, and go with the world.
    """
    if hasattr(signal, "SIGPIPE"):  # as Python sets it: a write to a rank that died raises
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    try:
        _die_with_parent(parent)
        _quiet(log)
        sys.path[:] = [os.path.abspath(p) for p in sys.path]  # "" would mean scratch next
        os.chdir(scratch)
        dump = register_dump(Path(log).with_suffix(".stack"))  # noqa: F841 (kept open)
        try:
            context, module = _setup(conn, rank, size, impl, module_name, backend, groups)
        except LoadError as e:  # the learner's file: its message says it all
            _send(conn, ("failed", str(e)))
            return
        except BaseException:
            _send(conn, ("failed", traceback.format_exc()))
            return
        _send(conn, ("ready", None))
        while True:
            try:
                message = _recv(conn)
            except EOFError:
                break
            if message[0] == "exit":
                break
            _, tag, where, payload = message
            _send(conn, _run(context, module, tag, where, payload, impl))
        import torch.distributed as dist

        dist.destroy_process_group()
    finally:
        os._exit(0)  # never back into the grading process's code (pytest, atexit handlers)


def _setup(
    conn: Any, rank: int, size: int, impl: str, module_name: str, backend: str,
    groups: dict[str, list[int]],
) -> tuple[RankContext, Any]:  # fmt: skip
    torch.set_num_threads(1)  # four ranks share two cores; and no OpenMP pool after fork
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=PG_TIMEOUT_S)
    store = _store(conn, rank, size, timeout)
    if (name := _loopback()) is not None:
        # Each process group's own sockets on the loopback interface too: left to itself, gloo
        # (and nccl) takes the address the hostname resolves to, often a LAN address. Not
        # setdefault: a value from the user's environment would open the ranks to the network.
        os.environ["GLOO_SOCKET_IFNAME"] = os.environ["NCCL_SOCKET_IFNAME"] = name
    device = torch.device("cpu")
    if backend == "nccl":
        device = torch.device("cuda", rank)
        torch.cuda.set_device(device)
    dist.init_process_group(
        backend, store=dist.PrefixStore("pg", store), rank=rank, world_size=size, timeout=timeout
    )
    made = {}
    for name, members in groups.items():  # every rank creates every group, in the same order
        group = dist.new_group(members, timeout=timeout)
        made[name] = group if rank in members else None
    tracker = Tracker(dist.PrefixStore("calls", store), rank)
    _install(tracker)  # before the learner's file: `from torch.distributed import ...` too
    module = load_file(Path(impl), module_name)
    return RankContext(rank, size, device, made, tracker), module


def _run(
    context: RankContext, module: Any, tag: str, where: tuple[str, str], payload: Any, impl: str
) -> dict:
    tracker = context.tracker
    tracker.begin(tag)
    report: dict[str, Any] = {"value": None, "error": None, "stuck": None, "mistake": None}
    try:
        fn = getattr(importlib.import_module(where[0]), where[1])
        report["value"] = fn(module, context, payload)
    except KeyboardInterrupt:
        raise
    except Mistake as e:
        report["mistake"] = str(e)
    except BaseException as e:
        if tracker.stuck is None and not isinstance(e, Stuck):
            report["error"] = _error(e, impl)
    finally:
        tracker.end()
    report["stuck"] = tracker.stuck
    report["calls"] = tracker.calls
    report["phase"] = tracker.phase_name
    if report["stuck"]:
        report["value"] = None
    return report


# -- in the grading process -----------------------------------------------------------------


@dataclass
class Report:
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


def _fork_is_safe(backend: str) -> bool:
    if backend != "gloo" or sys.platform != "linux" or os.environ.get("NORM_KATAS_SPAWN"):
        return False
    return not torch.cuda.is_initialized()


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
        self.start_method = "fork" if _fork_is_safe(backend) else "spawn"
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
            _send(conn, first[1])
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
                    return _recv(conn)
                except EOFError:
                    pass
            if ready:
                process.join(1)
                return ("failed", f"rank {rank} ended ({_status(process.exitcode)})")

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

    def run(self, fn: Callable[..., Any], payloads: list[Any]) -> list[Report]:
        """Run fn(module, ctx, payload) on every rank; one Report per rank."""
        self.runs += 1
        tag = f"run{self.runs}"
        where = (fn.__module__, fn.__qualname__)
        reports = {}
        try:
            watches = {rank: Watch(process.pid) for rank, process in enumerate(self.processes)}
            for rank, conn in enumerate(self.conns):
                _send(conn, ("run", tag, where, payloads[rank]))
            pending = dict(enumerate(self.conns))
            while pending:
                sentinels = {self.processes[r].sentinel: r for r in pending}
                ready = wait_for([*pending.values(), *sentinels], timeout=0.1)
                for rank, conn in list(pending.items()):
                    if conn in ready:
                        with contextlib.suppress(EOFError):
                            data = _recv(conn)
                            reports[rank] = Report(rank, **data)
                            del pending[rank]
                for sentinel, rank in sentinels.items():
                    if sentinel in ready and rank in pending:
                        self.processes[rank].join(1)
                        status = _status(self.processes[rank].exitcode)
                        reports[rank] = Report(rank, died=f"ended abruptly ({status})")
                        del pending[rank]
                if any(r.died and r.hang is None for r in reports.values()):
                    break  # the others may wait for it at a collective: do not wait for them
                # Stuck: computing far longer than a step takes, or not even computing. The
                # others go on, to report how they waited for it.
                for rank in list(pending):
                    if over := _overdue(watches[rank], WAIT_S + MARGIN_S, NET_S + MARGIN_S):
                        reports[rank] = self._stuck(rank, *over)
                        del pending[rank]
            for rank in pending:  # waiting for a rank that died
                reports[rank] = Report(rank, died="did not finish: stopped with the others")
        except BaseException:
            self.close(kill=True)  # a pytest-timeout (or Ctrl-C) mid-run: unusable ranks
            raise
        if any(r.died for r in reports.values()):
            for report in reports.values():
                if report.died and not report.died.startswith("did not finish"):
                    report.died += self._log_tail(report.rank)
            self.close(kill=True)
        return [reports[r] for r in range(self.size)]

    def _stuck(self, rank: int, cpu: float | None, wall: float) -> Report:
        """A stuck rank's report, with where it is now (it is stopped later, with the rest)."""
        frames = dump_stack(self.processes[rank].pid, self.logs / f"rank{rank}.stack")
        site = learner_site(frames) if frames else None
        hang = {
            "cpu": cpu, "wall": wall, "known": frames is not None,
            "site": str(site) if site else None, "where": str(frames[0]) if frames else None,
        }  # fmt: skip
        return Report(rank, died="did not finish", phase="", hang=hang)

    def close(self, *, kill: bool = False) -> None:
        """Stop the ranks: politely (unless kill), then by pid; their ports go with them."""
        for conn in self.conns:
            with contextlib.suppress(Exception):
                _send(conn, ("exit",))
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


def _status(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}"


# -- the verdict ----------------------------------------------------------------------------


def _ranks(ranks: list[int]) -> str:
    """'rank 1', 'ranks 1 and 2', 'ranks 1, 2 and 3'."""
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return f"ranks {', '.join(map(str, ranks[:-1]))} and {ranks[-1]}"


def _shape(shape: list[int]) -> str:
    return str(tuple(shape))


def _call(call: dict, *, shape: bool = True) -> str:
    """'the all_reduce in forward (training step 1), at katas/x.py line 40, of a (7,) tensor'"""
    text = f"the {call['name']} in {call['phase']}"
    if call["site"]:
        text += f" at {display_path(Path(call['site'][0]))} line {call['site'][1]}"
    if shape and call["shape"] is not None:
        text += f", on a {_shape(call['shape'])} {call['dtype']} tensor"
    return text


def divergence(reports: list[Report]) -> str | None:
    """Where the ranks' collectives first differ, told as the deadlock (or mix-up) it is."""
    by_group: dict[tuple, dict[int, list[dict]]] = {}
    for report in reports:
        for call in report.calls:
            by_group.setdefault(tuple(call["group"]), {})
    for report in reports:
        for members in by_group:
            if report.rank in members:
                mine = [c for c in report.calls if tuple(c["group"]) == members]
                by_group[members][report.rank] = mine
    for members, seqs in by_group.items():
        longest = max(len(s) for s in seqs.values())
        for k in range(longest):
            here = {r: (s[k] if k < len(s) else None) for r, s in seqs.items()}
            kinds = {_what(c) if c else None for c in here.values()}
            if len(kinds) == 1:
                shapes = {tuple(c["shape"] or ()) for c in here.values() if c}
                if len(shapes) > 1:
                    first = next(c for c in here.values() if c)
                    sizes = ", ".join(
                        f"{_shape(c['shape'])} on rank {r}" for r, c in here.items() if c
                    )
                    return (
                        f"{_call(first, shape=False)}, the ranks passed tensors of different "
                        f"shapes: {sizes}. A collective needs the same shape on every rank "
                        "(torch raises, or hangs, on a mismatch): pad to a common size, or "
                        "send something whose size does not depend on the local batch."
                    )
                continue
            for rank in sorted(here):
                call = here[rank]
                if call is None:
                    continue
                holders = [r for r, c in here.items() if c and _what(c) == _what(call)]
                missing = [
                    r for r in sorted(here) if r not in holders and
                    all(_what(c) != _what(call) for c in seqs[r][k:])
                ]  # fmt: skip
                if not missing:
                    continue
                instead: dict[str, list[int]] = {}  # what they did instead -> those ranks
                for r in missing:
                    other = here[r]
                    last = next(x.phase for x in reports if x.rank == r) or "setup"
                    if other:
                        did = f"went on to {_call(other, shape=False)}"
                    elif last == "done":  # the suite's name for after the last step
                        did = "finished every step without it"
                    else:
                        did = f"finished the step in {last} without it"
                    instead.setdefault(did, []).append(r)
                went = [f"{_ranks(rs)} {did}" for did, rs in instead.items()]
                return (
                    f"deadlock: {_ranks(missing)} never joined {_call(call)}, which "
                    f"{_ranks(holders)} called as collective #{k + 1} of group "
                    f"{list(members)}; {'; '.join(went)}. Every rank must make the same "
                    "collective calls in the same order: one that some ranks skip leaves the "
                    "others waiting forever (the grader stopped them)."
                )
            calls = "; ".join(
                f"rank {r}: {_call(c, shape=False) if c else 'none'}" for r, c in here.items()
            )
            return (
                f"the ranks called different collectives as collective #{k + 1} of group "
                f"{list(members)} ({calls}). Every rank must make the same collective calls in "
                "the same order, or they deadlock or mix up each other's tensors."
            )
    return None


def _spent(hang: dict) -> str:
    """How a stuck rank spent its time: 'ran for 7.2 s of CPU time without finishing its step'."""
    cpu, wall = hang["cpu"], hang["wall"]
    if cpu is None:
        return f"did not finish its step within {wall:.0f} s"
    if cpu >= WAIT_S + MARGIN_S:
        return f"ran for {cpu:.1f} s of CPU time without finishing its step"
    return f"waited {wall:.0f} s without finishing its step, using {cpu:.1f} s of CPU time"


def raised(e: BaseException, learner: Path) -> str:
    """'raised ValueError: ..., at katas/x.py line 40: code' for an exception in the learner's
    code (in this process)."""
    error = _error(e, str(learner))
    text = f": {error['text']}" if error["text"] else ""
    where = ""
    if error["file"]:
        where = f", at {display_path(Path(error['file']))} line {error['line']}: {error['code']}"
    return f"raised {error['type']}{text}{where}"


def reraise_at(error: dict) -> None:
    """Raise NotImplementedError as if from the learner's line, so that the report reads it as
    an unfinished stub (it looks for the learner's frame in the traceback)."""
    exc = NotImplementedError(error["text"])
    if error["file"] and error["line"]:
        source = "\n" * (error["line"] - 1) + "raise __exc__"
        exec(compile(source, error["file"], "exec"), {"__exc__": exc})
    raise exc


def expect_ranks_ok(reports: list[Report], *, given: str, advice: str = "") -> list[Any]:
    """Every rank must have finished; else fail with what went wrong, where. Returns the values.

    NotImplementedError on a rank is raised again here (the stub is unfinished); another
    exception names the rank and the learner's line; then a rank that died, the collectives
    that diverged (a deadlock), a rank stuck for good.
    """
    advice = f" {advice}" if advice else ""
    for report in reports:
        if report.error and report.error["type"] == "NotImplementedError":
            reraise_at(report.error)
    for report in reports:
        if report.mistake and not report.stuck:
            fail(f"{given}: on rank {report.rank}, {report.mistake}")
    for report in reports:
        if report.error:
            e = report.error
            where = ""
            if e["file"]:
                where = f", at {display_path(Path(e['file']))} line {e['line']}: {e['code']}"
            rank = report.rank
            if e["type"] == "SystemExit":
                fail(f"{given}: your code called sys.exit({e['exit']!r}) on rank {rank}{where}.")
            text = f": {e['text']}" if e["text"] else ""
            fail(f"{given}: on rank {rank} your code raised {e['type']}{text}{where}.{advice}")
    for report in reports:
        if report.died and not report.died.startswith("did not finish"):
            fail(
                f"{given}: rank {report.rank} {report.died}\nDoes your code call os._exit(), "
                "or crash the interpreter?"
            )
    hung = [r for r in reports if r.died and r.hang is not None]
    for report in hung:  # stopped where the learner's code was not running: not their fault
        if report.hang["known"] and report.hang["site"] is None:
            cannot_grade(
                f"{given}: rank {report.rank} was stopped, as it {_spent(report.hang)}, but it "
                f"was in the grader's own work (at {report.hang['where']}), not in your code. "
                "The machine may be too busy, or the grader is stuck."
            )
    if hung:
        waited = next((r.stuck for r in reports if r.stuck and "neither joined" in r.stuck), "")
        said = "; ".join(
            f"{'it' if len(hung) == 1 else f'rank {r.rank}'} {_spent(r.hang)}"
            + (f", at {r.hang['site']}" if r.hang["site"] else "")
            for r in hung
        )
        fail_hung(
            f"{given}: {_ranks([r.rank for r in hung])} did not finish and "
            f"{'was' if len(hung) == 1 else 'were'} stopped: {said}\n"
            + (waited[0].upper() + waited[1:] if waited else "An endless loop?")
        )
    if (text := divergence(reports)) is not None:
        fail(f"{given}: {text}")
    for report in reports:
        if report.stuck:
            fail(f"{given}: rank {report.rank} could not complete a collective: {report.stuck}")
    return [r.value for r in reports]
