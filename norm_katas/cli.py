"""The command line of norm-katas: every door (nox, watch, mock, the self-tests) comes here.

python -m norm_katas grade <kata> [--watch] [options]  grade your file (nox -s kata-<name>)
python -m norm_katas watch <kata> [options]            grade on every save (grade --watch)
python -m norm_katas list [--markdown]                 the katas (--markdown: the README's table)
python -m norm_katas init [DIR]                        a workspace of fresh stubs (pip installs)
python -m norm_katas mock [--kata K] [--minutes M]     a timed mock interview (nox -s mock)
python -m norm_katas progress [--history [KATA]]       your progress (nox -s progress)
python -m norm_katas reset <kata>... | --all           restore stubs (nox -s reset)
python -m norm_katas reset <kata>... --notebook        restore a clone's notebooks/ instead
python -m norm_katas solution <kata>                   the reference solution (nox -s solution)
python -m norm_katas stubs [--record]                  authors: check or record stubs/
python -m norm_katas new-kata <name>                   authors: a new kata, ready to run
python -m norm_katas notebooks [--write]               authors: check or write stubs/notebooks/
python -m norm_katas docs [--write]                    authors: check or write the docs' examples
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
from pathlib import Path

from norm_katas.grader import door, options, registry, runner
from norm_katas.grader.registry import kata_table  # the README's kata table

USAGE = __doc__.split("\n\n", 1)[1]
PROG = "python -m norm_katas"


def cmd_grade(argv: list[str]) -> int:
    from norm_katas.grader.request import Request, UsageError

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

    parser = argparse.ArgumentParser(prog=door.prog("mock"), description="A timed mock interview.")
    mock.add_arguments(parser)
    args = parser.parse_args(argv)
    return mock.run(args.kata, args.minutes, args.seed)


def cmd_progress(argv: list[str]) -> int:
    from norm_katas.practice import progress

    text = progress.answer(progress.parser(door.prog("progress")), argv, door.TERMINAL)
    print(progress.report() if text is None else text)
    return 0


def cmd_reset(argv: list[str]) -> int:
    from norm_katas.practice import workspace

    parser = argparse.ArgumentParser(
        prog=door.prog("reset"), description="Restore stubs; your file is backed up first."
    )
    parser.add_argument("katas", nargs="*", help="kata names, e.g. layernorm")
    parser.add_argument("--all", action="store_true", help="reset every kata")
    parser.add_argument(
        "--notebook",
        action="store_true",
        help="restore the kata's notebook in a clone (notebooks/<kata>.ipynb), not its file",
    )
    args = parser.parse_args(argv)
    katas = registry.load() if args.all else [registry.get(name) for name in args.katas]
    if not katas:
        parser.error(f"name a kata (e.g. {door.command('reset', 'layernorm')}) or pass --all")
    if args.notebook:
        return _reset_notebooks(katas)
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
    from norm_katas import notebooks
    from norm_katas.practice import workspace

    if registry.INSTALLED:
        print(
            "reset --notebook restores a clone's notebooks/; this norm-katas is installed, with "
            "none: in a notebook, `%kata NAME` starts a fresh cell from the stub.",
            file=sys.stderr,
        )
        return runner.USAGE
    for kata in katas:
        mine = f"{notebooks.FOLDER}/{notebooks.path(kata).name}"
        existed = notebooks.path(kata).exists()
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
        print(f"  fresh stubs: {', '.join(p.name for p in written)}")
    if kept:
        print(f"  kept as they are (yours already): {', '.join(p.name for p in kept)}")
    print(
        f"Next: cd {folder} and grade a kata, e.g. `{PROG} grade layernorm` "
        f"(`{PROG} list` lists them; `{PROG} watch layernorm` grades on every save)."
    )
    return 0


def cmd_solution(argv: list[str]) -> int:
    from norm_katas.practice import workspace

    ask = parser(
        "solution",
        "Print a kata's reference solution; the peek is recorded in your history.",
        prog=door.prog("solution"),
    )
    ask.add_argument("kata", help="the kata's name, e.g. layernorm")
    kata = registry.get(ask.parse_args(argv).kata)
    text = workspace.show_solution(kata)
    print(f"# solutions/{kata.file}  (this peek is recorded in your history)\n")
    print(text)
    return 0


def cmd_stubs(argv: list[str]) -> int:
    """Check stubs/ against stubs/hashes.txt, or (--record) record it: authors only."""
    from norm_katas.grader import stubs

    ask = parser("stubs", "Authors: check stubs/ against stubs/hashes.txt, or record it.")
    ask.add_argument("--record", action="store_true", help="record stubs/ (and the notebooks)")
    record = ask.parse_args(argv).record
    if record and (refused := _authors_only("stubs --record")):
        return refused
    if record:
        try:
            done = stubs.record()
        except stubs.StubError as e:
            print(e, file=sys.stderr)
            return 1
        print("\n".join(done) or "every stub was recorded already: nothing to do")
        if not registry.INSTALLED:  # the notebooks hold the stubs: write them again
            from norm_katas import notebooks

            print("\n".join(notebooks.write()))
    return _problems(
        stubs.problems(), f"{len(stubs.recorded())} pristine stubs in stubs/, each as recorded"
    )


def cmd_notebooks(argv: list[str]) -> int:
    """Check notebooks/ against the stubs and the registry, or (--write) write it: authors."""
    from norm_katas import notebooks

    ask = parser(
        "notebooks", "Authors: check the tool's notebooks against the stubs, or write them."
    )
    ask.add_argument(
        "--write",
        action="store_true",
        help="write stubs/notebooks/ afresh (and a learner's notebook only where untouched)",
    )
    write = ask.parse_args(argv).write
    if write and (refused := _authors_only("notebooks --write")):
        return refused
    if write:
        print("\n".join(notebooks.write()) or "every notebook is up to date: nothing to do")
    fine = f"{len(registry.load())} notebooks in {notebooks.PRISTINE}/, each up to date"
    return _problems(notebooks.problems(), fine)


def cmd_docs(argv: list[str]) -> int:
    """Check the examples and generated text of README.md and docs/, or (--write) write them."""
    from norm_katas import docs

    ask = parser(
        "docs",
        "Authors: check that every example in README.md and docs/ is what the tool prints now "
        "(by grading the files it names), or write them.",
    )
    ask.add_argument("--write", action="store_true", help="write the stale blocks afresh")
    write = ask.parse_args(argv).write
    if refused := _authors_only("docs"):
        return refused
    return docs.run(write)


def _authors_only(command: str) -> int | None:
    """An author's command writes the kata content: in a clone only, never into an installed
    copy (site-packages), which a reinstall would silently undo. Exit 2 there, or None."""
    if not registry.INSTALLED:
        return None
    print(
        f"{PROG} {command} is for authors, in a clone of norm-katas: this one is installed "
        f"({registry.ROOT.parent}), whose files are not yours to edit. Nothing was written.",
        file=sys.stderr,
    )
    return runner.USAGE


def _problems(problems: list[str], fine: str) -> int:
    """An author's check: each problem on stderr (exit 1), or that all is `fine` (exit 0)."""
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(fine)
    return 1 if problems else 0


def cmd_new_kata(argv: list[str]) -> int:
    """Write the skeleton of a new kata (nox -s new-kata -- NAME): authors only."""
    from norm_katas.grader import scaffold

    ask = parser("new-kata", "Authors: write a new kata's skeleton, ready to run.")
    ask.usage = "nox -s new-kata -- NAME   (e.g. nox -s new-kata -- instancenorm)"
    ask.add_argument("name", metavar="NAME", help="the new kata's name, e.g. instancenorm")
    name = ask.parse_args(argv).name
    if refused := _authors_only("new-kata"):
        return refused
    try:
        done = scaffold.create(name)
    except scaffold.ScaffoldError as e:
        print(f"{e}. Nothing was written.", file=sys.stderr)
        return runner.USAGE
    print("\n".join(done))
    return 0


def cmd_serve(argv: list[str]) -> int:
    from norm_katas.grader import server

    ask = parser("serve", "Self-tests: a warm grading server on stdin and stdout.")
    ask.add_argument("--device", help="the device most requests grade on")
    return server.serve(device=ask.parse_args(argv).device)


def cmd_child(argv: list[str]) -> int:
    """The child of a grading, as a fresh interpreter where fork is not available: argv is
    the request's JSON file (runner._run_child wrote it) and the scratch folder."""
    from norm_katas.grader.request import Request

    request = Request.from_json(Path(argv[0]).read_text())
    try:
        runner.warm_up([request.kata])
    except runner.GraderError as e:
        print(e, file=sys.stderr)
        return runner.GRADER_FAILED
    return runner.child_main(request, Path(argv[1]))


COMMANDS = {
    "grade": cmd_grade, "watch": cmd_watch, "list": cmd_list, "init": cmd_init,
    "mock": cmd_mock, "progress": cmd_progress, "reset": cmd_reset, "solution": cmd_solution,
    "stubs": cmd_stubs, "new-kata": cmd_new_kata, "notebooks": cmd_notebooks, "docs": cmd_docs,
    "serve": cmd_serve,
    "_child": cmd_child,
}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage:\n{USAGE}")
        return 0
    if not argv or argv[0] not in COMMANDS:
        if argv:
            known = [name for name in COMMANDS if not name.startswith("_")]
            close = difflib.get_close_matches(argv[0], known, n=1, cutoff=0.6)
            again = f"; did you mean {close[0]!r}?" if close else ""
            print(f"unknown command {argv[0]!r}{again}", file=sys.stderr)
        print(f"usage:\n{USAGE}", file=sys.stderr)
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
        return COMMANDS[argv[0]](argv[1:])
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


def run() -> None:
    """The `norm-katas` command that pip installs: `python -m norm_katas` by its short name."""
    global PROG, USAGE
    PROG, USAGE = "norm-katas", USAGE.replace("python -m norm_katas", "norm-katas")
    runner.exit_process(main(sys.argv[1:]))
