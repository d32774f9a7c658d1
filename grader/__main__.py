"""Command line: `python -m grader grade <kata> [pytest options]`, `python -m grader list`.

Grading runs pytest in a child process so that nothing the learner's code does (os._exit,
a segfault in an extension, an exhausted stack) can take the grader down with it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from grader import registry

CHECK_TIMEOUT_S = 10  # per check; the slowest reference check takes well under a second


def grade(name: str, args: list[str]) -> int:
    kata = registry.get(name)
    wanted, args = _pop_option(args, "--report-json")
    timeout = (
        [] if any(a.startswith("--timeout") for a in args) else [f"--timeout={CHECK_TIMEOUT_S}"]
    )
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [
            sys.executable, "-m", "pytest", str(kata.suite), "--checklist",
            "--rootdir", str(registry.ROOT), f"--report-json={report}", *timeout, *args,
        ]  # fmt: skip
        code = subprocess.call(cmd, cwd=registry.ROOT)
        if not report.exists():
            return code  # no run began (a usage error): pytest has said why
        if wanted:
            shutil.copyfile(report, wanted)
        if json.loads(report.read_text()).get("finished"):
            return code
    print(
        f"\nThe grader's process ended abruptly (exit status {code}) while running your code."
        "\nDoes your file call os._exit(), or crash the interpreter? Remove that and grade again.",
        file=sys.stderr,
    )
    return 1


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


def list_katas(markdown: bool = False) -> int:
    if markdown:
        print(kata_table())
        return 0
    for k in registry.load():
        print(f"{k.name:14} {k.difficulty:7} {k.minutes:3} min  {k.title}")
    return 0


def kata_table() -> str:
    """The README's kata table, from the registry."""
    rows = ["| nox session | file | kata | difficulty | minutes |", "|---|---|---|---|---|"]
    for k in registry.load():
        rows.append(
            f"| `kata-{k.name}` | `katas/{k.file}` | {k.title} | {k.difficulty} | {k.minutes} |"
        )
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "grade":
        try:
            return grade(argv[1], argv[2:])
        except KeyError as e:
            print(e.args[0], file=sys.stderr)
            return 2
    if argv[:1] == ["list"]:
        return list_katas(markdown="--markdown" in argv)
    print(
        "usage: python -m grader grade <kata> [pytest options]\n"
        "       python -m grader list [--markdown]",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
