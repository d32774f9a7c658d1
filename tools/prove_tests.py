"""The authors' view of a test file in the test-writing mode: what the learner's report says,
and, which it never shows, the mutants of the reference that pass every test (their keys quote
the reference's code).

    python -m tools.prove_tests KATA [FILE]     (default FILE: solutions/tests/test_<stem>.py)

A surviving mutant is a gap in the test file, or a mistake only a code rule sees: then it goes
in tests/mutants/<stem>.toml under [[code_rule_only]], with why (norm_katas.content.mutation).
Exit status 0 when the file catches every interview mistake and every counted mutant with no
false alarm.
"""

from __future__ import annotations

import argparse
import sys
import time

from norm_katas.content import registry
from norm_katas.engine import runner
from norm_katas.engine.proving import prove
from norm_katas.engine.proving.report import print_verdict
from norm_katas.engine.request import Request


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.prove_tests", description=__doc__)
    parser.add_argument("kata")
    parser.add_argument("file", nargs="?", default="solutions")
    args = parser.parse_args(argv)
    kata = registry.get(args.kata)
    runner.warm_up([kata])
    request = Request.create(kata, args.file, tests=True)
    start = time.monotonic()
    verdict = prove(request)
    assert verdict is not None
    code = print_verdict(verdict, request, sys.stdout)
    print(f"\n({time.monotonic() - start:.1f} s)")
    for alarm in verdict.alarms:
        print(f"FALSE ALARM: {alarm.test} on {alarm.layer}: {alarm.message}")
    for mistake in verdict.mistakes:
        if mistake.caught_by is None:
            print(f"MISSED: {mistake.key} ({mistake.check})")
    for key in verdict.survivors:
        print(f"SURVIVING MUTANT: {key}")
    return 0 if code == 0 and not verdict.survivors else 1


if __name__ == "__main__":
    sys.exit(main())
