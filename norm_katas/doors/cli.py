"""The learner's command line: every door in a terminal (nox, watch, mock, the self-tests)
comes here. The authors' commands are in norm_katas.authoring.cli; norm_katas.__main__ joins
both into one command line.

python -m norm_katas grade <kata> [--watch] [options]  grade your file (nox -s kata-<name>)
python -m norm_katas watch <kata> [options]            grade on every save (grade --watch)
python -m norm_katas list [--markdown]                 the katas (--markdown: the README's table)
python -m norm_katas init [DIR]                        a workspace of fresh stubs (pip installs)
python -m norm_katas mock [--kata K] [--minutes M]     a timed mock interview (nox -s mock)
python -m norm_katas progress [--history [KATA]]       your progress (nox -s progress)
python -m norm_katas today [--minutes N]               what to practise today (nox -s today)
python -m norm_katas reset <kata>... | --all           restore stubs (nox -s reset)
python -m norm_katas reset <kata>... --notebook        restore a clone's notebooks/ instead
python -m norm_katas solution <kata>                   the reference solution (nox -s solution)
python -m norm_katas serve                             self-tests: a warm grading server

Installed with pip, the command is also `norm-katas`: `norm-katas init` makes a workspace folder
of stubs, and every command run in it works on its files (in a clone, katas/ is the workspace).
"""

from __future__ import annotations

import argparse
import difflib
import gc
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from norm_katas.content import pristine, registry
from norm_katas.content.registry import kata_table  # the README's kata table
from norm_katas.engine import options, runner, suggest

USAGE = __doc__.split("\n\n", 2)[1]
PROG = "python -m norm_katas"


def cmd_grade(argv: list[str]) -> int:
    from norm_katas.engine.request import Request, UsageError

    # From nox the learner typed `nox -s kata-<name> -- ...`: name that in what we say.
    nox = "NORM_KATAS_INVOKED_FROM" in os.environ
    prog = f"nox -s kata-{argv[0]} --" if nox and argv else f"{PROG} grade <kata>"
    if options.wants_help(argv):
        print(options.help_text(prog))
        return 0
    if not argv or argv[0].startswith("-"):
        print(f"usage: {PROG} grade <kata> [--watch] [options]", file=sys.stderr)
        return runner.USAGE
    try:
        request = Request.parse(registry.get(argv[0]), argv[1:], prog)  # the only parse
    except UsageError as e:
        print(e, file=sys.stderr)
        return runner.USAGE
    if request.watch:
        from norm_katas.practice import watch

        return watch.run(request)
    from norm_katas.practice import grading

    try:
        runner.warm_up([request.kata])
    except runner.GraderError as e:
        print(e, file=sys.stderr)
        return runner.GRADER_FAILED
    except KeyboardInterrupt:  # while torch and the checks were being imported
        print(
            "\nInterrupted (Ctrl-C) before the grading began: no verdict, nothing recorded.",
            file=sys.stderr,
        )
        return 130
    try:
        return grading.grade(request).code
    except grading.Interrupted:
        print(
            "\nThe grading was interrupted (Ctrl-C): no verdict, nothing recorded.", file=sys.stderr
        )
        return 130


def cmd_watch(argv: list[str]) -> int:
    """`watch <kata> [options]`: `grade <kata> --watch [options]`."""
    if options.wants_help(argv):
        text = options.help_text(f"{PROG} watch <kata>")
        print(text.replace("Grades your file", "Grades your file on every save", 1))
        return 0
    if not argv or argv[0].startswith("-"):
        return cmd_grade(argv)
    return cmd_grade([argv[0], "--watch", *argv[1:]])


def parser(name: str, description: str, prog: str = "") -> argparse.ArgumentParser:
    """A command's own parser, so that `<command> --help` answers with that command's help."""
    return argparse.ArgumentParser(prog=prog or f"{PROG} {name}", description=description)


def cmd_list(argv: list[str]) -> int:
    ask = parser("list", "List the katas: name, difficulty, minutes to aim for, title.")
    ask.add_argument("--markdown", action="store_true", help="the README's table, in Markdown")
    if ask.parse_args(argv).markdown:
        print(kata_table())
        return 0
    for k in registry.load():
        print(f"{k.name:20} {k.difficulty:7} {k.minutes:3} min  {k.title}")
    return 0


def cmd_mock(argv: list[str]) -> int:
    from norm_katas.practice import mock

    parser = argparse.ArgumentParser(
        prog=suggest.prog("mock"), description="A timed mock interview."
    )
    mock.add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return mock.run(args.kata, args.minutes, args.seed)
    except mock.schedule.Unavailable as e:  # no --kata, and no fsrs to pick one with
        print(f"{e} Or name the kata: {suggest.command('mock', '--kata', 'layernorm')}.",
              file=sys.stderr)  # fmt: skip
        return runner.GRADER_FAILED


def cmd_progress(argv: list[str]) -> int:
    from norm_katas.practice import progress

    text = progress.answer(progress.parser(suggest.prog("progress")), argv, suggest.TERMINAL)
    print(progress.report() if text is None else text)
    return 0


def cmd_today(argv: list[str]) -> int:
    from norm_katas.practice import schedule, today

    try:
        print(today.answer(today.parser(suggest.prog("today")), argv, suggest.TERMINAL))
    except schedule.Unavailable as e:
        print(e, file=sys.stderr)
        return runner.GRADER_FAILED
    return 0


def cmd_reset(argv: list[str]) -> int:
    from norm_katas.practice import workspace

    parser = argparse.ArgumentParser(
        prog=suggest.prog("reset"), description="Restore stubs; your file is backed up first."
    )
    parser.add_argument("katas", nargs="*", help="kata names, e.g. layernorm")
    parser.add_argument("--all", action="store_true", help="reset every kata")
    parser.add_argument(
        "--notebook",
        action="store_true",
        help="restore the kata's notebook in a clone (notebooks/<kata>.ipynb), not its file",
    )
    parser.add_argument(
        "--tests",
        action="store_true",
        help="restore your tests of the kata (tests/test_<kata>.py), not its file",
    )
    args = parser.parse_args(argv)
    katas = registry.load() if args.all else [registry.get(name) for name in args.katas]
    if not katas:
        parser.error(f"name a kata (e.g. {suggest.command('reset', 'layernorm')}) or pass --all")
    if args.notebook:
        return _reset_notebooks(katas)
    if args.tests:
        if args.all:  # the katas that have the test-writing mode
            katas = [k for k in katas if k.tests_pristine.exists()]
        for kata in katas:
            if not kata.tests_pristine.exists():
                print(f"{kata.name} has no test-writing mode yet: no tests to reset.")
                continue
            existed = kata.tests_stub.exists()
            backup = workspace.reset_tests(kata)
            mine = registry.shown(kata.tests_stub)
            if not existed:
                print(f"{mine} was missing: it is the test stub again.")
            elif backup is None:
                print(f"{mine} is already the untouched test stub: nothing to do.")
            else:
                print(
                    f"{mine} is the test stub again. Your previous file is saved at\n    {backup}"
                )
        return 0
    for kata in katas:
        existed = kata.stub.exists()
        backup = workspace.reset(kata)
        mine = registry.shown(kata.stub)  # katas/<file> in a clone
        if not existed:
            print(f"{mine} was missing: it is the stub again.")
        elif backup is None:
            print(f"{mine} is already the untouched stub: nothing to do.")
        else:
            print(f"{mine} is the stub again. Your previous file is saved at\n    {backup}")
    return 0


def _reset_notebooks(katas: list[registry.Kata]) -> int:
    """reset --notebook: a clone's notebooks/<stem>.ipynb as the tool ships it, backed up first."""
    from norm_katas.practice import workspace

    if registry.INSTALLED:
        print(
            "reset --notebook restores a clone's notebooks/; this norm-katas is installed, with "
            "none: in a notebook, `%kata NAME` starts a fresh cell from the stub.",
            file=sys.stderr,
        )
        return runner.USAGE
    for kata in katas:
        mine = f"{pristine.NOTEBOOKS}/{kata.notebook.name}"
        existed = kata.notebook.exists()
        backup = workspace.reset_notebook(kata)
        if not existed:
            print(f"{mine} was missing: it is the kata's notebook again.")
        elif backup is None:
            print(f"{mine} is already the untouched notebook: nothing to do.")
        else:
            print(f"{mine} is the kata's notebook again. Yours is saved at\n    {backup}")
    return 0


def cmd_init(argv: list[str]) -> int:
    """A workspace for an installed norm-katas: the stubs to edit, in a folder of your choice."""
    from norm_katas.practice import workspace

    parser = argparse.ArgumentParser(
        prog=f"{PROG} init",
        description="Make DIR a workspace: a fresh stub of every kata to edit, and the mark that "
        "lets norm-katas find it. Files already there are yours: they are never overwritten.",
    )
    parser.add_argument("dir", nargs="?", default="norm-katas", help="default: ./norm-katas")
    args = parser.parse_args(argv)
    folder = Path(args.dir).expanduser()
    if not folder.is_absolute():
        folder = Path(os.environ.get("NORM_KATAS_INVOKED_FROM") or Path.cwd()) / folder
    if folder.exists() and not folder.is_dir():
        print(f"{args.dir} is a file, not a folder: name another DIR", file=sys.stderr)
        return runner.USAGE
    written, kept = workspace.init(folder)
    print(f"The workspace {folder}:")
    if written:
        print(f"  fresh stubs: {', '.join(_named(p, folder) for p in written)}")
    if kept:
        print(f"  kept as they are (yours already): {', '.join(_named(p, folder) for p in kept)}")
    print(
        f"Next: cd {folder} and grade a kata, e.g. `{PROG} grade layernorm` "
        f"(`{PROG} list` lists them; `{PROG} watch layernorm` grades on every save)."
    )
    return 0


def _named(path: Path, folder: Path) -> str:
    return path.relative_to(folder).as_posix()


def cmd_solution(argv: list[str]) -> int:
    from norm_katas.practice import workspace

    ask = parser(
        "solution",
        "Print a kata's reference solution; the peek is recorded in your history.",
        prog=suggest.prog("solution"),
    )
    ask.add_argument("kata", help="the kata's name, e.g. layernorm")
    kata = registry.get(ask.parse_args(argv).kata)
    text = workspace.show_solution(kata)
    print(f"# solutions/{kata.file}  (this peek is recorded in your history)\n")
    print(text)
    return 0


def cmd_serve(argv: list[str]) -> int:
    from norm_katas.engine import server

    ask = parser("serve", "Self-tests: a warm grading server on stdin and stdout.")
    ask.add_argument("--device", help="the device most requests grade on")
    return server.serve(device=ask.parse_args(argv).device)


def cmd_child(argv: list[str]) -> int:
    """The child of a grading, as a fresh interpreter where fork is not available: argv is
    the request's JSON file (runner.launch.run_child wrote it) and the scratch folder."""
    from norm_katas.engine.request import Request

    request = Request.from_json(Path(argv[0]).read_text())
    try:
        runner.warm_up([request.kata])
    except runner.GraderError as e:
        print(e, file=sys.stderr)
        return runner.GRADER_FAILED
    return runner.child_main(request, Path(argv[1]))


def cmd_prove_child(argv: list[str]) -> int:
    """A child of the test-writing mode, as a fresh interpreter where fork is not available:
    argv is its job's JSON file (engine.proving wrote it)."""
    import json

    from norm_katas.engine import proving

    return proving.run_job(json.loads(Path(argv[0]).read_text(encoding="utf-8")))


Command = Callable[[list[str]], int]
COMMANDS: dict[str, Command] = {
    "grade": cmd_grade, "watch": cmd_watch, "list": cmd_list, "init": cmd_init,
    "mock": cmd_mock, "progress": cmd_progress, "today": cmd_today, "reset": cmd_reset,
    "solution": cmd_solution,
    "serve": cmd_serve,
    "_child": cmd_child, "_prove": cmd_prove_child,
}  # fmt: skip


def main(
    argv: list[str] | None = None, commands: dict[str, Command] | None = None, usage: str = ""
) -> int:
    """Run one command of `commands` (the learner's, by default), answering a mistyped one
    with `usage`."""
    argv = sys.argv[1:] if argv is None else argv
    commands = COMMANDS if commands is None else commands
    usage = usage or USAGE
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage:\n{usage}")
        return 0
    if not argv or argv[0] not in commands:
        if argv:
            known = [name for name in commands if not name.startswith("_")]
            close = difflib.get_close_matches(argv[0], known, n=1, cutoff=0.6)
            again = f"; did you mean {close[0]!r}?" if close else ""
            print(f"unknown command {argv[0]!r}{again}", file=sys.stderr)
        print(f"usage:\n{usage}", file=sys.stderr)
        return runner.USAGE
    if sys.stdin is not None and sys.stdin.isatty():
        # On a terminal Ctrl-C must stop a watch or a mock, even when this process inherited
        # SIGINT ignored (a job started with & from a script): Python then installs no handler.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # Importing torch makes millions of objects, and the collector's full passes over them
    # were a tenth of a command's start: off while the command starts, back on once the
    # grader is warm (runner.warm_up), in a grading's process (child_main), or at the end.
    gc.disable()
    try:
        return commands[argv[0]](argv[1:])
    except KeyError as e:  # an unknown kata name
        print(e.args[0], file=sys.stderr)
        return runner.USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a writer whose pipe closed
    except SystemExit as e:  # argparse, watch mode: through exit_process, as every other end
        return e.code if isinstance(e.code, int) else int(e.code is not None)
    except Exception as e:
        from norm_katas.practice.workspace import WorkspaceError

        if isinstance(e, WorkspaceError):
            print(e, file=sys.stderr)
            return 1
        if isinstance(e, registry.NoWorkspace):
            print(e, file=sys.stderr)
            return runner.USAGE
        raise
    finally:
        gc.enable()


def installed_as(name: str) -> None:
    """The `norm-katas` command that pip installs is `python -m norm_katas` by its short name:
    named so in every usage and message from here on."""
    global PROG, USAGE
    PROG, USAGE = name, USAGE.replace("python -m norm_katas", name)
