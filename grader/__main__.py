"""Command line behind the nox sessions.

python -m grader grade <kata> [pytest options]   grade a file (nox -s kata-<name>)
python -m grader mock [--kata K] [--minutes M]   a timed mock interview (nox -s mock)
python -m grader progress                        the progress table (nox -s progress)
python -m grader reset <kata>... | --all         restore stubs, backing up first (nox -s reset)
python -m grader solution <kata>                 show a reference solution (nox -s solution)
python -m grader list [--markdown]               the katas
"""

from __future__ import annotations

import argparse
import sys

from grader import registry

USAGE = __doc__.split("\n\n", 1)[1]


def kata_table() -> str:
    """The README's kata table, from the registry."""
    rows = ["| nox session | file | kata | difficulty | minutes |", "|---|---|---|---|---|"]
    for k in registry.load():
        rows.append(
            f"| `kata-{k.name}` | `katas/{k.file}` | {k.title} | {k.difficulty} | {k.minutes} |"
        )
    return "\n".join(rows)


def cmd_list(argv: list[str]) -> int:
    if "--markdown" in argv:
        print(kata_table())
        return 0
    for k in registry.load():
        print(f"{k.name:14} {k.difficulty:7} {k.minutes:3} min  {k.title}")
    return 0


def cmd_grade(argv: list[str]) -> int:
    from grader import runner

    if not argv or argv[0].startswith("-"):
        raise SystemExit("usage: python -m grader grade <kata> [pytest options]")
    code, _ = runner.grade(registry.get(argv[0]), argv[1:])
    return code


def cmd_mock(argv: list[str]) -> int:
    from grader import mock

    parser = argparse.ArgumentParser(prog="nox -s mock --", description="A timed mock interview.")
    parser.add_argument(
        "--kata",
        help="which kata (default: random, favouring katas not yet solved or solved slowly)",
    )
    parser.add_argument(
        "--minutes", type=float, help="time budget (default: the kata's suggested minutes)"
    )
    parser.add_argument("--seed", type=int, help="seed the random choice of kata")
    args = parser.parse_args(argv)
    return mock.run(args.kata, args.minutes, args.seed)


def cmd_progress(argv: list[str]) -> int:
    from grader import progress

    print(progress.report())
    return 0


def cmd_reset(argv: list[str]) -> int:
    from grader import workspace

    parser = argparse.ArgumentParser(
        prog="nox -s reset --", description="Restore stubs; your file is backed up first."
    )
    parser.add_argument("katas", nargs="*", help="kata names, e.g. layernorm")
    parser.add_argument("--all", action="store_true", help="reset every kata")
    args = parser.parse_args(argv)
    katas = registry.load() if args.all else [registry.get(name) for name in args.katas]
    if not katas:
        parser.error("name a kata (e.g. nox -s reset -- layernorm) or pass --all")
    for kata in katas:
        backup = workspace.reset(kata)
        if backup is None:
            print(f"katas/{kata.file} is already the untouched stub: nothing to do.")
        else:
            print(
                f"katas/{kata.file} is the stub again. Your previous file is saved at\n    {backup}"
            )
    return 0


def cmd_solution(argv: list[str]) -> int:
    from grader import workspace

    if len(argv) != 1:
        raise SystemExit("usage: nox -s solution -- <kata>")
    kata = registry.get(argv[0])
    text = workspace.show_solution(kata)
    print(f"# solutions/{kata.file}  (this peek is recorded in your history)\n")
    print(text)
    return 0


COMMANDS = {
    "grade": cmd_grade, "mock": cmd_mock, "progress": cmd_progress, "reset": cmd_reset,
    "solution": cmd_solution, "list": cmd_list,
}  # fmt: skip


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(f"usage:\n{USAGE}", file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except KeyError as e:  # an unknown kata name
        print(e.args[0], file=sys.stderr)
        return 2
    except Exception as e:
        from grader.workspace import WorkspaceError

        if isinstance(e, WorkspaceError):
            print(e, file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
