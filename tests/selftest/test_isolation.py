"""Self-tests: a grading touches nothing outside itself.

- The learner's code runs in a scratch folder: what it writes by a relative path, at import or
  in forward, in the grading process or on a SyncBatchNorm rank, never lands in the repository
  (graded from a copy of it, so that a grader without this protection breaks only the copy).
- The paths the user gives (--impl, --report-json) are taken from where the user is.
- The SyncBatchNorm ranks open nothing another machine can reach: every socket the grading's
  processes listen on, once the ranks are up and after each run, is on the loopback interface.
Each grades in a fresh interpreter; the scratch folder's, forked and spawned (NORM_KATAS_SPAWN).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from norm_katas.content import registry

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

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


def _is_loopback(address: Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def _non_loopback_interface() -> str | None:
    """The interface of the default route, as a user's GLOO_SOCKET_IFNAME might name it."""
    try:
        rows = Path("/proc/net/route").read_text().splitlines()[1:]
    except OSError:
        return None
    return next((r.split()[0] for r in rows if r.split()[1] == "00000000"), None)


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux's /proc")
def test_the_ranks_listen_on_loopback_only(tmp_path: Path) -> None:
    # Every process of the grading carries the mark. listen_probe, a plugin of the grading's
    # own pytest, reads their listening sockets once each World's ranks are all up (process
    # groups joined), after each run and before it closes: at those moments, not by sampling
    # from here, which misses ranks that live a fraction of a second on a loaded machine.
    # GLOO_SOCKET_IFNAME, if the user's environment names another interface, must not take
    # the ranks' own sockets there. (Forked ranks: spawned ones set up the same.)
    mark = f"norm-katas-selftest-{os.getpid()}-{tmp_path.name}"
    log = tmp_path / "listening.jsonl"
    here = str(Path(__file__).parent)
    env = {
        **os.environ, "NORM_KATAS_SELFTEST": mark, "NORM_KATAS_LISTEN_LOG": str(log),
        "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])),
        "PYTEST_ADDOPTS": f"{os.environ.get('PYTEST_ADDOPTS', '')} -p listen_probe",
    }  # fmt: skip
    if (interface := _non_loopback_interface()) is not None:
        env["GLOO_SOCKET_IFNAME"] = env["NCCL_SOCKET_IFNAME"] = interface
    run = subprocess.run(
        [sys.executable, "-m", "norm_katas", "grade", "syncbatchnorm", "--impl", "solutions",
         "-k", "global_mean", ROOM],
        cwd=registry.ROOT, capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    output = run.stdout + run.stderr
    assert run.returncode == 0 and "Interview core 1/1 ✓" in output, output
    moments = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    started = [m for m in moments if m["when"] == "started"]
    assert started, f"the probe saw no World start: did the ranks start?\n{output}"
    assert all(m["alive"] and m["ranks"] == 4 for m in started), moments
    seen = {(ipaddress.ip_address(host), port) for m in moments for host, port in m["sockets"]}
    assert all(m["sockets"] for m in started), f"nothing listened with the ranks up: {moments}"
    shown = sorted(f"{address}:{port}" for address, port in seen)
    exposed = sorted(f"{address}:{port}" for address, port in seen if not _is_loopback(address))
    assert not exposed, f"the grading listened beyond loopback on {exposed} (all: {shown})"
