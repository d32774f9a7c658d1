"""The authors' view of a test file in the test-writing mode: what the learner's report says,
and, which it never shows, the mutants of the reference that pass every test (their keys quote
the reference's code).

    python -m tools.prove_tests KATA [FILE]     (default FILE: solutions/tests/test_<stem>.py)
    python -m tools.prove_tests KATA [FILE] --no-mutants   (the catalogue's layers only)
    python -m tools.prove_tests --all           (every kata's reference tests: nox -s mutants)

A surviving mutant is a gap in the test file, or a mistake only a code rule sees: then it goes
in tests/mutants/<stem>.toml under [[code_rule_only]], with why (norm_katas.content.mutation).
Exit status 0 when the file catches every interview mistake and every counted mutant with no
false alarm.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from norm_katas.content import registry
from norm_katas.engine import runner
from norm_katas.engine.proving import prove
from norm_katas.engine.proving.report import print_verdict
from norm_katas.engine.request import Request


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.prove_tests", description=__doc__)
    parser.add_argument("kata", nargs="?")
    parser.add_argument("file", nargs="?", default="solutions")
    parser.add_argument("--all", action="store_true", help="every kata's reference tests")
    parser.add_argument(
        "--no-mutants", dest="mutants", action="store_false",
        help="the catalogue's layers only (quicker while writing a file)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.all == bool(args.kata):
        parser.error("name a kata, or pass --all")
    katas = (
        [k for k in registry.load() if k.tests_solution.exists()]
        if args.all
        else [registry.get(args.kata)]
    )
    runner.warm_up(katas)
    failed = [
        kata.name
        for kata in katas
        if not prove_one(kata, args.file, quiet=args.all, mutants=args.mutants)
    ]
    if args.all:
        print(f"reference tests of {len(katas)} katas: " + (f"FAILED {failed}" if failed else "ok"))
    return 1 if failed else 0


def prove_one(kata: registry.Kata, file: str, quiet: bool, mutants: bool = True) -> bool:
    request = Request.create(kata, file, tests=True, mutants=mutants)
    start = time.monotonic()
    verdict = prove(request)
    assert verdict is not None
    if quiet:
        with open(os.devnull, "w") as out:
            code = print_verdict(verdict, request, out)
    else:
        code = print_verdict(verdict, request, sys.stdout)
    share = f"{verdict.mutants_caught}/{verdict.mutants}"
    print(
        f"{kata.name}: mistakes {verdict.caught}/{len(verdict.mistakes)}, mutants {share}, "
        f"false alarms {len(verdict.alarms)} ({time.monotonic() - start:.1f} s)"
    )
    for alarm in verdict.alarms:
        print(f"  FALSE ALARM: {alarm.test} on {alarm.layer}: {alarm.message}")
    for mistake in verdict.mistakes:
        if mistake.caught_by is None:
            print(f"  MISSED: {mistake.key} ({mistake.check})")
    for key in verdict.survivors:
        print(f"  SURVIVING MUTANT: {key}")
    return code == 0 and not verdict.survivors


if __name__ == "__main__":
    sys.exit(main())
