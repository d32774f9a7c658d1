"""What runs on each rank: join the group, load the learner's file, run what the world sends.

Every collective the learner's code calls through torch.distributed (dist.all_reduce,
torch.distributed.nn.functional.*, ...) is stopped on its way in: the ranks first compare notes
in the TCPStore (which collective, called from which line, in which phase of the step, on what
shape), and only when all of them are there with the same call does the real one run. A rank
that skips a collective, or calls another one, is then reported at once as the deadlock it
would be ("rank 1 never joined the all_reduce that rank 0 called in forward ..."), instead of
hanging, and the process group stays usable for the next step.

Waiting is measured in the CPU time of the rank waited for, not in wall-clock time, so that a
busy machine, which slows a rank down, never makes it look stuck: a rank that computes for
WAIT_S seconds of CPU without reaching the collective loops. One that uses no CPU is waited
for NET_S (it waits for something itself). (Where a process's CPU time cannot be read, not on
Linux, WAIT_S is wall-clock time.)
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import functools
import importlib
import inspect
import json
import os
import signal
import socket
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from norm_katas.checks import tensors_in
from norm_katas.runtime import transfer
from norm_katas.runtime.limits import Watch, register_dump
from norm_katas.runtime.loader import LoadError, learner_frame, load_file
from norm_katas.runtime.processes import loopback_interface
from norm_katas.runtime.tracing import is_learner_code

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


def _site() -> tuple[str, int] | None:
    """The innermost frame of the learner's code on the stack: (file, line)."""
    frame = sys._getframe(2)
    while frame is not None:
        if is_learner_code(frame.f_code.co_filename):
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
        numel = sum(t.numel() for t in tensors_in(sent))
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
        keys = [f"{self.tag}/call/{key}/{k}/{peer}" for peer in pending]
        if keys and _arrives(self.store, keys):  # usual: every peer there at once, one round trip
            for peer, theirs in zip(pending, self.store.multi_get(keys), strict=True):
                self._agree(peer, json.loads(theirs), call, k)
            return
        watches = {peer: Watch(self._pid(peer)) for peer in pending}
        while pending:
            peer = pending[0]
            theirs_key = f"{self.tag}/call/{key}/{k}/{peer}"
            # Blocking: the wait returns the moment the peer arrives (peers usually arrive within
            # milliseconds, and a polled wait slept past them: a tenth of a grading's time).
            if _arrives(self.store, [theirs_key]):
                pending.remove(peer)
                self._agree(peer, json.loads(self.store.get(theirs_key)), call, k)
                continue
            for peer in pending:
                if self.store.check([f"{self.tag}/end/{peer}"]) and not self.store.check(
                    [f"{self.tag}/call/{key}/{k}/{peer}"]
                ):
                    self._stop(f"rank {peer} finished without collective #{k}")
            for peer in pending:
                if (over := overdue(watches[peer], WAIT_S, NET_S)) is not None:
                    self._stop(
                        f"rank {peer} neither joined the {name} that rank {self.rank} called in "
                        f"{call['phase']} nor finished its step, {_meanwhile(*over)} (it was "
                        f"last in {self._peer_phase(peer)}): an endless loop, or a collective "
                        "outside torch.distributed's functions that this rank never joined?"
                    )

    def _agree(self, peer: int, theirs: dict, call: dict, k: int) -> None:
        """Stop unless the peer's collective #k is this rank's: the same call, the same shape."""
        if call_kind(theirs) != call_kind(call) or theirs["shape"] != call["shape"]:
            self._stop(f"rank {peer} made another call as collective #{k}")

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


ARRIVAL_WAIT = datetime.timedelta(milliseconds=50)


def _arrives(store: Any, keys: list[str]) -> bool:
    """Whether every key is set within ARRIVAL_WAIT: a blocking wait on the store, which answers
    the moment the last peer sets its key. On a timeout the store cancels the wait (torch 2.4
    on), so the connection stays in step."""
    try:
        store.wait(keys, ARRIVAL_WAIT)
    except RuntimeError as e:  # DistStoreError: "wait timeout after 50ms", "Socket Timeout"
        if "timeout" not in str(e).lower():
            raise
        return False
    return True


def overdue(watch: Watch, cpu_s: float, wall_s: float) -> tuple[float | None, float] | None:
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


def call_kind(call: dict) -> tuple:
    """What makes two ranks' calls the same collective: name, phase of the step, call site."""
    return call["name"], call["phase"], tuple(call["site"] or ())


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


def describe_error(e: BaseException, learner: str) -> dict:
    """A learner-facing description of an exception: type, text and the learner's line."""
    frame = learner_frame(e.__traceback__, Path(learner), elsewhere=True)
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
        return dist.TCPStore("127.0.0.1", recv(conn), size, False, timeout)
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
    send(conn, ("port", port))
    return store


def send(conn: Any, message: Any) -> None:
    """Send to the other end of a pipe; nothing, if that process has died (its sentinel, or
    EOF on the next recv, says so where it matters).

    The grading process keeps SIGPIPE's default, so that `| head` ends it quietly: a write to
    the pipe of a rank that died would kill it there, and the learner would read a checklist
    cut short, with no word why. So SIGPIPE is ignored for the write.
    """
    # Copies, not torch's reductions for multiprocessing, which would share tensors through
    # file descriptors and start a helper thread; and plain tensors as bytes (transfer.py).
    data = transfer.dumps(message)
    with _sigpipe_ignored(), contextlib.suppress(BrokenPipeError, ConnectionResetError):
        conn.send_bytes(data)


@contextlib.contextmanager
def _sigpipe_ignored() -> Any:
    try:
        previous = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    except (AttributeError, ValueError):  # no SIGPIPE (Windows), or not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGPIPE, previous)


def recv(conn: Any) -> Any:
    return transfer.loads(conn.recv_bytes())


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
            send(conn, ("failed", str(e)))
            return
        except BaseException:
            send(conn, ("failed", traceback.format_exc()))
            return
        send(conn, ("ready", None))
        while True:
            try:
                message = recv(conn)
            except EOFError:
                break
            if message[0] == "exit":
                break
            _, tag, where, payload = message
            send(conn, _run(context, module, tag, where, payload, impl))
        # No destroy_process_group: every rank is between runs and leaving, and its sockets
        # close with the process. Destroying the groups first took half of a world's close.
    finally:
        os._exit(0)  # never back into the grading process's code (pytest, atexit handlers)


def _setup(
    conn: Any, rank: int, size: int, impl: str, module_name: str, backend: str,
    groups: dict[str, list[int]],
) -> tuple[RankContext, Any]:  # fmt: skip
    torch.set_num_threads(1)  # four ranks share two cores; and no OpenMP pool after fork
    if backend == "gloo":
        _pin(rank, size)
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=PG_TIMEOUT_S)
    store = _store(conn, rank, size, timeout)
    if (name := loopback_interface()) is not None:
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


def _pin(rank: int, size: int) -> None:
    """Where the ranks outnumber the cores they may use, keep each on one of them, in turn.
    Left to the scheduler, they moved between cores at the wake-ups of every collective: on 2
    cores a 4-rank all_reduce took 5 ms, and 2.5 ms with rank r kept on core r mod 2. With a
    core or more for each rank they are left alone: pinned, several gradings at once (parallel
    self-tests) would all crowd the same first cores."""
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        if 1 < len(cores) < size:
            os.sched_setaffinity(0, {cores[rank % len(cores)]})


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
            report["error"] = describe_error(e, impl)
    finally:
        tracker.end()
    report["stuck"] = tracker.stuck
    report["calls"] = tracker.calls
    report["phase"] = tracker.phase_name
    if report["stuck"]:
        report["value"] = None
    return report
