"""Command line behind the practice nox sessions.

python -m practice grade <kata> [--watch] [grader options]   nox -s kata-<name>
python -m practice mock [--kata K] [--minutes M]             nox -s mock
python -m practice progress [--history [KATA]]               nox -s progress
python -m practice reset <kata>... | --all                   nox -s reset
python -m practice solution <kata>                           nox -s solution
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from grader import registry, runner

USAGE = __doc__.split("\n\n", 1)[1]


def cmd_grade(argv: list[str]) -> int:
    from grader import options

    # From nox the learner typed `nox -s kata-<name> -- ...`: name that in what we say.
    nox = "NORM_KATAS_INVOKED_FROM" in os.environ
    prog = f"nox -s kata-{argv[0]} --" if nox and argv else "python -m practice grade <kata>"
    if options.wants_help(argv):
        print(options.help_text(prog))
        return 0
    if not argv or argv[0].startswith("-"):
        print("usage: python -m practice grade <kata> [--watch] [options]", file=sys.stderr)
        return runner.USAGE
    kata, args = registry.get(argv[0]), argv[1:]
    watching = "--watch" in args
    args = [a for a in args if a != "--watch"]
    if (problem := runner.usage_problem(kata, args, prog)) is not None:
        print(problem, file=sys.stderr)
        return runner.USAGE
    if watching:
        from practice import watch

        return watch.run(kata, args)
    from practice import grading

    try:
        runner.warm_up([kata])
    except runner.GraderError as e:
        print(e, file=sys.stderr)
        return runner.GRADER_FAILED
    return grading.grade(kata, args).code


MAX_MINUTES = 600  # ten hours: longer than any interview; also keeps out inf and typos


def _minutes(text: str) -> float:
    """--minutes: a time budget a mock can run on (argparse says which option and exits 2)."""
    try:
        minutes = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of minutes") from None
    if not 0 < minutes <= MAX_MINUTES:  # also false for nan
        raise argparse.ArgumentTypeError(
            f"{text} minutes: give a budget more than 0 and at most {MAX_MINUTES} minutes"
        )
    return minutes


def cmd_mock(argv: list[str]) -> int:
    from practice import mock

    parser = argparse.ArgumentParser(prog="nox -s mock --", description="A timed mock interview.")
    parser.add_argument(
        "--kata",
        help="which kata (default: random, favouring katas not yet solved or solved slowly)",
    )
    parser.add_argument(
        "--minutes",
        type=_minutes,
        help=f"time budget, more than 0 and at most {MAX_MINUTES} (default: the kata's suggestion)",
    )
    parser.add_argument("--seed", type=int, help="seed the random choice of kata")
    args = parser.parse_args(argv)
    return mock.run(args.kata, args.minutes, args.seed)


def cmd_progress(argv: list[str]) -> int:
    from practice import progress

    parser = argparse.ArgumentParser(prog="nox -s progress --", description="Your progress.")
    parser.add_argument("--history", action="store_true", help="list your past attempts")
    parser.add_argument("kata", nargs="?", help="with --history: only this kata's attempts")
    parser.add_argument(
        "--limit", type=int, default=30, help="with --history: the last N (default 30, 0: all)"
    )
    args = parser.parse_args(argv)
    if args.kata and not args.history:
        parser.error("a kata name goes with --history (nox -s progress -- --history layernorm)")
    if args.history:
        kata = registry.get(args.kata).name if args.kata else None
        print(progress.attempts(kata, args.limit or None))
    else:
        print(progress.report())
    return 0


def cmd_reset(argv: list[str]) -> int:
    from practice import workspace

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
        existed = kata.stub.exists()
        backup = workspace.reset(kata)
        if not existed:
            print(f"katas/{kata.file} was missing: it is the stub again.")
        elif backup is None:
            print(f"katas/{kata.file} is already the untouched stub: nothing to do.")
        else:
            print(
                f"katas/{kata.file} is the stub again. Your previous file is saved at\n    {backup}"
            )
    return 0


def cmd_solution(argv: list[str]) -> int:
    from practice import workspace

    if len(argv) != 1:
        print("usage: nox -s solution -- <kata>", file=sys.stderr)
        return runner.USAGE
    kata = registry.get(argv[0])
    text = workspace.show_solution(kata)
    print(f"# solutions/{kata.file}  (this peek is recorded in your history)\n")
    print(text)
    return 0


COMMANDS = {
    "grade": cmd_grade, "mock": cmd_mock, "progress": cmd_progress, "reset": cmd_reset,
    "solution": cmd_solution,
}  # fmt: skip


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage:\n{USAGE}")
        return 0
    if not argv or argv[0] not in COMMANDS:
        print(f"usage:\n{USAGE}", file=sys.stderr)
        return runner.USAGE
    if sys.stdin is not None and sys.stdin.isatty():
        # On a terminal Ctrl-C must stop a watch or a mock, even when this process inherited
        # SIGINT ignored (a job started with & from a script): Python then installs no handler.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return COMMANDS[argv[0]](argv[1:])
    except KeyError as e:  # an unknown kata name
        print(e.args[0], file=sys.stderr)
        return runner.USAGE
    except KeyboardInterrupt:
        return 130
    except SystemExit as e:  # argparse, watch mode: through exit_process, as every other end
        return e.code if isinstance(e.code, int) else int(e.code is not None)
    except Exception as e:
        from practice.workspace import WorkspaceError

        if isinstance(e, WorkspaceError):
            print(e, file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    runner.exit_process(main(sys.argv[1:]))
