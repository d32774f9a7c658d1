"""Command line: `python -m grader grade <kata> [pytest options]`, `python -m grader list`.

Grading runs pytest in a child process so that nothing the learner's code does (os._exit,
a segfault in an extension, an exhausted stack) can take the grader down with it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from grader import registry

CHECK_TIMEOUT_S = 10  # per check; the slowest reference check takes well under a second


def grade(name: str, args: list[str]) -> int:
    kata = registry.get(name)
    with tempfile.TemporaryDirectory() as tmp:
        report_path = Path(tmp) / "report.json"
        wanted = [a for a in args if a.startswith("--report-json")]
        extra = [] if wanted else [f"--report-json={report_path}"]
        timeout = [] if any(a.startswith("--timeout") for a in args) else [f"--timeout={CHECK_TIMEOUT_S}"]
        cmd = [
            sys.executable, "-m", "pytest", str(kata.suite), "--checklist",
            "--rootdir", str(registry.ROOT), *timeout, *extra, *args,
        ]  # fmt: skip
        code = subprocess.call(cmd, cwd=registry.ROOT)
        if wanted or report_path.exists():
            return code
        if code in (2, 3, 4):  # usage or internal error: pytest already said why
            return code
    print(
        f"\nThe grader's process ended abruptly (exit status {code}) while running your code."
        "\nDoes your file call os._exit(), or crash the interpreter? Remove that and grade again.",
        file=sys.stderr,
    )
    return 1


def list_katas() -> int:
    for k in registry.load():
        print(f"{k.name:14} {k.difficulty:7} {k.minutes:3} min  {k.title}")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "grade":
        try:
            return grade(argv[1], argv[2:])
        except KeyError as e:
            print(e.args[0], file=sys.stderr)
            return 2
    if argv[:1] == ["list"]:
        return list_katas()
    if argv[:1] == ["json"]:  # the registry as JSON, for tools that do not read TOML
        print(json.dumps([k.__dict__ for k in registry.load()], indent=2))
        return 0
    print("usage: python -m grader grade <kata> [pytest options] | python -m grader list", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
