"""What the grading's processes listen on, read at the moments the ranks are known to be up.

A pytest plugin for the grading's own pytest (test_isolation starts the grading with
`PYTEST_ADDOPTS=-p listen_probe` and this folder on PYTHONPATH): it reads every TCP socket the
grading's processes (those whose environment holds NORM_KATAS_SELFTEST) listen on when a World
has started (every rank has joined its process groups and answered "ready"), after each run
and before it closes, and appends them to the file NORM_KATAS_LISTEN_LOG names. Sampling from
outside while the grading runs would race the ranks, which live a fraction of a second.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def address(hex_address: str) -> Address:
    """An address as /proc/net/tcp{,6} prints it: 32-bit words, each in host byte order."""
    raw = bytes.fromhex(hex_address)
    if sys.byteorder == "little":
        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(raw)


def marked(mark: bytes) -> list[int]:
    """The processes whose environment holds mark: the grading's, however started."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if mark in (proc / "environ").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue  # gone, or not ours to read
    return pids


def listening(pid: int) -> set[tuple[Address, int]]:
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
                host, port = fields[1].split(":")
                found.add((address(host), int(port, 16)))
    return found


def _record(when: str, world: Any) -> None:
    sockets = set()
    for pid in marked(os.environ["NORM_KATAS_SELFTEST"].encode()):
        sockets |= listening(pid)
    line = {
        "when": when, "ranks": len(world.processes), "alive": world.alive,
        "sockets": sorted([str(host), port] for host, port in sockets),
    }  # fmt: skip
    with open(os.environ["NORM_KATAS_LISTEN_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(line) + "\n")


def _observed(when: str, method: Callable[..., Any], after: bool) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not after and self.processes:
            _record(when, self)
        result = method(self, *args, **kwargs)
        if after and self.processes:
            _record(when, self)
        return result

    return wrapper


@pytest.hookimpl
def pytest_configure(config: pytest.Config) -> None:
    from norm_katas.checks.distributed.world import World

    World._start = _observed("started", World._start, after=True)  # type: ignore[method-assign]
    World.run = _observed("ran", World.run, after=True)  # type: ignore[method-assign]
    World.close = _observed("closing", World.close, after=False)  # type: ignore[method-assign]
