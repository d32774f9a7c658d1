"""The authors' commands: they write the kata content, in a clone only.

python -m norm_katas stubs [--record]                  authors: check or record stubs/
python -m norm_katas new-kata <name>                   authors: a new kata, ready to run
python -m norm_katas notebooks [--write]               authors: check or write stubs/notebooks/
python -m norm_katas docs [--write]                    authors: check or write the docs' examples

In a copy installed with pip they refuse, exit 2, and write nothing.
"""

from __future__ import annotations

import sys

from norm_katas.authoring import docs_writer, new_kata, notebook_writer, record
from norm_katas.content import pristine, registry
from norm_katas.doors import cli
from norm_katas.doors.cli import parser
from norm_katas.engine import runner

USAGE = __doc__.split("\n\n", 2)[1]


def cmd_stubs(argv: list[str]) -> int:
    """Check stubs/ against stubs/hashes.txt, or (--record) record it: authors only."""
    ask = parser("stubs", "Authors: check stubs/ against stubs/hashes.txt, or record it.")
    ask.add_argument("--record", action="store_true", help="record stubs/ (and the notebooks)")
    write = ask.parse_args(argv).record
    if write and (refused := _authors_only("stubs --record")):
        return refused
    if write:
        try:
            done = record.record()
        except pristine.StubError as e:
            print(e, file=sys.stderr)
            return 1
        print("\n".join(done) or "every stub was recorded already: nothing to do")
        if not registry.INSTALLED:  # the notebooks hold the stubs: write them again
            print("\n".join(notebook_writer.write()))
    return _problems(
        record.problems(),
        f"{len(pristine.recorded())} pristine stubs in stubs/, each as recorded",
    )


def cmd_notebooks(argv: list[str]) -> int:
    """Check notebooks/ against the stubs and the registry, or (--write) write it: authors."""
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
        print("\n".join(notebook_writer.write()) or "every notebook is up to date: nothing to do")
    fine = f"{len(registry.load())} notebooks in {pristine.PRISTINE_NOTEBOOKS}/, each up to date"
    return _problems(notebook_writer.problems(), fine)


def cmd_docs(argv: list[str]) -> int:
    """Check the examples and generated text of README.md and docs/, or (--write) write them."""
    ask = parser(
        "docs",
        "Authors: check that every example in README.md and docs/ is what the tool prints now "
        "(by grading the files it names), or write them.",
    )
    ask.add_argument("--write", action="store_true", help="write the stale blocks afresh")
    write = ask.parse_args(argv).write
    if refused := _authors_only("docs"):
        return refused
    return docs_writer.run(write)


def _authors_only(command: str) -> int | None:
    """An author's command writes the kata content: in a clone only, never into an installed
    copy (site-packages), which a reinstall would silently undo. Exit 2 there, or None."""
    if not registry.INSTALLED:
        return None
    print(
        f"{cli.PROG} {command} is for authors, in a clone of norm-katas: this one is installed "
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
    ask = parser("new-kata", "Authors: write a new kata's skeleton, ready to run.")
    ask.usage = "nox -s new-kata -- NAME   (e.g. nox -s new-kata -- instancenorm)"
    ask.add_argument("name", metavar="NAME", help="the new kata's name, e.g. instancenorm")
    name = ask.parse_args(argv).name
    if refused := _authors_only("new-kata"):
        return refused
    try:
        done = new_kata.create(name)
    except new_kata.ScaffoldError as e:
        print(f"{e}. Nothing was written.", file=sys.stderr)
        return runner.USAGE
    print("\n".join(done))
    return 0


COMMANDS: dict[str, cli.Command] = {
    "stubs": cmd_stubs, "new-kata": cmd_new_kata, "notebooks": cmd_notebooks, "docs": cmd_docs,
}  # fmt: skip
