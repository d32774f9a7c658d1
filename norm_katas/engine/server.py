"""A warm grader behind a pipe: one process imports torch and every suite once, then grades
each request in a forked child. The self-tests grade hundreds of files through it.

Protocol, one JSON object per line. The server says {"ready": true} (or {"error": message})
once warm; then for each {"request": Request.to_json(), "out": path} it grades the request
(parsed by the client: the server parses no options), appends the transcript (checklist and
any message) to `out`, and answers {"code": exit code}.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import IO

from norm_katas.content import registry
from norm_katas.engine import proving, runner
from norm_katas.engine.request import Request


def serve(
    stdin: IO[str] = sys.stdin, stdout: IO[str] = sys.stdout, device: str | None = None
) -> int:
    """device: the one most requests grade on, for warm_up (Triton's engine proven once)."""
    try:
        runner.warm_up(registry.load(), long_lived=True, device=device)
        _answer(stdout, {"ready": True})
    except runner.GraderError as e:
        _answer(stdout, {"error": str(e)})
    for line in stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        request = Request.from_json(message["request"])
        with open(message["out"], "a", encoding="utf-8") as out:
            grade = proving.grade if request.tests else runner.grade
            outcome = grade(request, out=out)
        _answer(stdout, {"code": outcome.code})
    return 0


def _answer(stdout: IO[str], message: dict) -> None:
    stdout.write(json.dumps(message) + "\n")
    stdout.flush()


class Client:
    """Starts a server in a fresh interpreter and grades through it. device: the one most of
    its requests grade on (serve's)."""

    def __init__(self, env: dict[str, str] | None = None, device: str | None = None) -> None:
        on = ["--device", device] if device else []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "norm_katas", "serve", *on], cwd=registry.ROOT, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env or dict(os.environ),
        )  # fmt: skip
        hello = self._read()
        self.error: str | None = hello.get("error")

    def grade(self, request: Request, out: Path) -> int:
        assert self.process.stdin is not None
        message = {"request": request.to_json(), "out": str(out)}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        return int(self._read()["code"])

    def _read(self) -> dict:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the grading server ended (exit status {self.process.wait()})")
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)
