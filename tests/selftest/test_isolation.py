"""Self-tests: a grading touches nothing outside itself.

- The learner's code runs in a scratch folder: what it writes by a relative path, at import or
  in forward, in the grading process or on a SyncBatchNorm rank, never lands in the repository
  (graded from a copy of it, so that a grader without this protection breaks only the copy).
- The paths the user gives (--impl, --report-json) are taken from where the user is.
- The SyncBatchNorm ranks open nothing another machine can reach: every socket the grading's
  processes listen on, while the ranks run, is on the loopback interface.
Each grades in a fresh interpreter; the scratch folder's, forked and spawned (NORM_KATAS_SPAWN).
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from norm_katas.grader import registry

CATALOGUE = registry.ROOT / "tests" / "catalogue"
WRITER = CATALOGUE / "writes" / "syncbatchnorm_relative_paths.py"
# Checks that load the file in the grading process and on the ranks, and run forward in both.
# Spawned, only the grading process's: it is spawned in another folder (the repository) than
# it works in, while the ranks work where they do however started, and four spawned ranks
# import torch four times over.
SELECTION = {
    "fork": "parameters or without_process_group or global_mean",
    "spawn": "parameters or without_process_group",
}
START = {"fork": {}, "spawn": {"NORM_KATAS_SPAWN": "1"}}
# No time limit under test here: the selection's checks get room on a loaded machine.
ROOM = "--timeout=120"


def snapshot(root: Path) -> dict[str, str]:
    """Every file under root (but Python's bytecode caches) -> a hash of its contents."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.mark.parametrize("start", START)
def test_relative_writes_land_in_a_scratch_folder(start: str, tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns(".git", ".nox", "__pycache__", "*.pyc", "catalogue")
    shutil.copytree(registry.ROOT, copy, ignore=ignore)
    mine = copy / WRITER.relative_to(registry.ROOT)  # in the copy's catalogue: it may subclass
    mine.parent.mkdir(parents=True)
    shutil.copyfile(WRITER, mine)
    before = snapshot(copy)
    run = subprocess.run(
        [sys.executable, "-m", "norm_katas", "grade", "syncbatchnorm", "--impl", str(mine),
         "-k", SELECTION[start], ROOM],
        cwd=copy, capture_output=True, text=True, timeout=600,
        env={**os.environ, **START[start]},
    )  # fmt: skip
    output = run.stdout + run.stderr
    checks = SELECTION[start].count(" or ") + 1
    assert run.returncode == 0 and f"Interview core {checks}/{checks} ✓" in output, output
    after = snapshot(copy)
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    assert not changed, f"the learner's file overwrote {changed} in the repository"
    assert not before.keys() - after.keys(), f"it deleted {sorted(before.keys() - after.keys())}"
    assert not after.keys() - before.keys(), f"it created {sorted(after.keys() - before.keys())}"


def test_paths_given_are_taken_from_where_the_user_is(tmp_path: Path) -> None:
    # The child works in its scratch folder; --impl and --report-json are the user's paths.
    kata = registry.get("layernorm")
    shutil.copyfile(kata.solution, tmp_path / "mine.py")
    run = subprocess.run(
        [sys.executable, "-m", "norm_katas", "grade", "layernorm", "--impl", "mine.py",
         "--report-json", "out.json", ROOM],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(registry.ROOT)},
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "out.json").is_file(), run.stdout + run.stderr


# -- the ranks' sockets -------------------------------------------------------------------

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _address(hex_address: str) -> Address:
    """An address as /proc/net/tcp{,6} prints it: 32-bit words, each in host byte order."""
    raw = bytes.fromhex(hex_address)
    if sys.byteorder == "little":
        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(raw)


def _is_loopback(address: Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def _marked(mark: bytes) -> list[int]:
    """The processes whose environment holds mark: the grading's, however started."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if mark in (proc / "environ").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue  # gone, or not ours to read
    return pids


def _listening(pid: int) -> set[tuple[Address, int]]:
    """(address, port) of each TCP socket that process listens on."""
    try:
        inodes = {
            target[len("socket:[") : -1]
            for fd in Path(f"/proc/{pid}/fd").iterdir()
            if (target := os.readlink(fd)).startswith("socket:[")
        }
        tables = [Path(f"/proc/{pid}/net/{t}").read_text() for t in ("tcp", "tcp6")]
    except OSError:
        return set()  # it ended meanwhile
    found = set()
    for table in tables:
        for line in table.splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # state LISTEN
                address, port = fields[1].split(":")
                found.add((_address(address), int(port, 16)))
    return found


def _non_loopback_interface() -> str | None:
    """The interface of the default route, as a user's GLOO_SOCKET_IFNAME might name it."""
    try:
        rows = Path("/proc/net/route").read_text().splitlines()[1:]
    except OSError:
        return None
    return next((r.split()[0] for r in rows if r.split()[1] == "00000000"), None)


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux's /proc")
def test_the_ranks_listen_on_loopback_only(tmp_path: Path) -> None:
    # Every process of the grading carries the mark; their listening sockets are read while
    # the ranks run. GLOO_SOCKET_IFNAME, if the user's environment names another interface,
    # must not take the ranks' own sockets there. (Forked ranks: spawned ones set up the same.)
    mark = f"norm-katas-selftest-{os.getpid()}-{tmp_path.name}"
    env = {**os.environ, "NORM_KATAS_SELFTEST": mark}
    if (interface := _non_loopback_interface()) is not None:
        env["GLOO_SOCKET_IFNAME"] = env["NCCL_SOCKET_IFNAME"] = interface
    grading = subprocess.Popen(
        [sys.executable, "-m", "norm_katas", "grade", "syncbatchnorm", "--impl", "solutions",
         "-k", "global_mean", ROOM],
        cwd=registry.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    seen: set[tuple[Address, int]] = set()
    try:
        while grading.poll() is None:
            for pid in _marked(mark.encode()):
                seen |= _listening(pid)
            time.sleep(0.05)
        output = grading.communicate(timeout=60)[0]
    finally:
        if grading.poll() is None:
            grading.kill()
            grading.wait()
    assert grading.returncode == 0, output
    assert seen, f"no process of the grading was seen listening: did the ranks start?\n{output}"
    shown = sorted(f"{address}:{port}" for address, port in seen)
    exposed = sorted(f"{address}:{port}" for address, port in seen if not _is_loopback(address))
    assert not exposed, f"the grading listened beyond loopback on {exposed} (all: {shown})"
