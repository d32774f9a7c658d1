"""Command line of the grader (the practice around it is `python -m practice`).

python -m grader grade <kata> [options]   grade a file once; exit 0 when the interview core passes
python -m grader list [--markdown]        the katas (--markdown: the README's table)
python -m grader stubs [--record]         check the pristine stubs (--record: after editing one)
python -m grader serve                    grade requests from stdin in a warm process (self-tests)
"""

from __future__ import annotations

import sys
from pathlib import Path

from grader import registry, runner

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
        print(f"{k.name:20} {k.difficulty:7} {k.minutes:3} min  {k.title}")
    return 0


def cmd_stubs(argv: list[str]) -> int:
    """Check stubs/ against stubs/hashes.txt, or (--record) record it: authors only."""
    from grader import stubs

    if argv not in ([], ["--record"]):
        print("usage: python -m grader stubs [--record]", file=sys.stderr)
        return runner.USAGE
    if argv:
        try:
            done = stubs.record()
        except stubs.StubError as e:
            print(e, file=sys.stderr)
            return 1
        print("\n".join(done) or "every stub was recorded already: nothing to do")
    problems = stubs.problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{len(stubs.recorded())} pristine stubs in stubs/, each as recorded")
    return 1 if problems else 0


def cmd_grade(argv: list[str]) -> int:
    from grader import options

    prog = "python -m grader grade <kata>"
    if options.wants_help(argv):
        print(options.help_text(prog))
        return 0
    if not argv or argv[0].startswith("-"):
        print("usage: python -m grader grade <kata> [options]", file=sys.stderr)
        return runner.USAGE
    kata = registry.get(argv[0])
    if (problem := runner.usage_problem(kata, argv[1:], prog)) is not None:
        print(problem, file=sys.stderr)
        return runner.USAGE
    try:
        runner.warm_up([kata])
    except runner.GraderError as e:
        print(e, file=sys.stderr)
        return runner.GRADER_FAILED
    return runner.grade(kata, argv[1:]).code


def cmd_serve(argv: list[str]) -> int:
    from grader import server

    return server.serve()


def cmd_child(argv: list[str]) -> int:
    """The child of a grading, as a fresh interpreter where fork is not available."""
    kata = registry.get(argv[0])
    try:
        runner.warm_up([kata])
    except runner.GraderError as e:
        print(e, file=sys.stderr)
        return runner.GRADER_FAILED
    return runner.child_main(kata, argv[3:], Path(argv[1]), Path(argv[2]))


COMMANDS = {
    "grade": cmd_grade, "list": cmd_list, "stubs": cmd_stubs, "serve": cmd_serve,
    "_child": cmd_child,
}  # fmt: skip


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage:\n{USAGE}")
        return 0
    if not argv or argv[0] not in COMMANDS:
        print(f"usage:\n{USAGE}", file=sys.stderr)
        return runner.USAGE
    try:
        return COMMANDS[argv[0]](argv[1:])
    except KeyError as e:  # an unknown kata name
        print(e.args[0], file=sys.stderr)
        return runner.USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    runner.exit_process(main(sys.argv[1:]))
