"""Grade a file in a child process, so that nothing the learner's code does (os._exit, a
segfault in an extension, an exhausted stack) can take the grader down with it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from grader import history, registry

CHECK_TIMEOUT_S = 10  # per check; the slowest reference check takes well under a second


def run(kata: registry.Kata, args: list[str]) -> tuple[int, dict | None]:
    """Run the kata's suite with the checklist; returns pytest's exit code and the report."""
    wanted, args = _pop_option(args, "--report-json")
    has_timeout = any(a.startswith("--timeout") for a in args)
    timeout = [] if has_timeout else [f"--timeout={CHECK_TIMEOUT_S}"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.json"
        cmd = [
            sys.executable, "-m", "pytest", str(kata.suite), "--checklist",
            "--rootdir", str(registry.ROOT), f"--report-json={path}", *timeout, *args,
        ]  # fmt: skip
        code = subprocess.call(cmd, cwd=registry.ROOT)
        if not path.exists():
            return code, None  # no run began (a usage error): pytest has said why
        if wanted:
            shutil.copyfile(path, wanted)
        report = json.loads(path.read_text())
    if not report.get("finished"):
        print(
            f"\nThe grader's process ended abruptly (exit status {code}) while running your "
            "code.\nDoes your file call os._exit(), or crash the interpreter? Remove that and "
            "grade again.",
            file=sys.stderr,
        )
        return 1, report
    return code, report


def grade(
    kata: registry.Kata, args: list[str], mode: str = "practice", **mock: object
) -> tuple[int, dict | None]:
    """run(), then record the attempt in the history (not for the reference solution)."""
    code, report = run(kata, args)
    impl, _ = _pop_option(args, "--impl")
    if report is not None and impl != "solutions":
        try:
            history.record_report(report, mode, **mock)
        except Exception as e:  # the history must never cost the learner a verdict
            print(f"(could not record this attempt in {history.db_path()}: {e})", file=sys.stderr)
    return code, report


def _pop_option(args: list[str], option: str) -> tuple[str | None, list[str]]:
    """Take `option VALUE` or `option=VALUE` out of args."""
    rest, value, it = [], None, iter(args)
    for arg in it:
        if arg == option:
            value = next(it, None)
        elif arg.startswith(option + "="):
            value = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    return value, rest
