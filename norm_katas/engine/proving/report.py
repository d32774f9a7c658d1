"""The learner's report of the test-writing mode: false alarms first (a test that rejects a
correct layer is wrong), then the interview mistakes caught and missed, in the catalogue's own
words, then the mutants' count; the headline last, and hints for the first missed mistake when
asked. The wrong layers themselves stay hidden: the report names them in words only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from norm_katas.content import registry
from norm_katas.engine import suggest
from norm_katas.engine.proving.verdict import Verdict, describe_layer, hints

if TYPE_CHECKING:
    from norm_katas.engine.request import Request

SOLVED, NOT_SOLVED, GRADER_FAILED = 0, 1, 3


def headline(v: Verdict) -> str:
    """ "Your tests catch 9 of 14 interview mistakes; no false alarms"."""
    alarms = len({a.test for a in v.alarms})
    said = (
        "no false alarms"
        if not alarms
        else f"{alarms} test{'s' if alarms != 1 else ''} raise{'' if alarms != 1 else 's'} "
        "a false alarm"
    )
    return f"Your tests catch {v.caught} of {len(v.mistakes)} interview mistakes; {said}"


def exit_code(v: Verdict) -> int:
    if v.grader_errors:
        return GRADER_FAILED
    return SOLVED if v.solved else NOT_SOLVED


def print_verdict(v: Verdict, request: Request, out: TextIO) -> int:
    """Print the report; returns the exit code."""

    def say(text: str = "") -> None:
        print(text, file=out)

    kata = request.kata
    shown = registry.shown(request.file)
    if v.grader_errors:
        from norm_katas.engine.runner.parent import grader_failed

        say(grader_failed("your tests could not be run to the end.", "\n".join(v.grader_errors)))
        return GRADER_FAILED
    say(f"Your tests of {kata.title}: {shown}")
    if v.load_error:
        say("\n✗ Your test file does not load, so no layer was tested:")
        say("    " + v.load_error.replace("\n", "\n    "))
        say("\nFix that and grade again.")
        return NOT_SOLVED
    if not v.tests:
        which = f" ({', '.join(v.collected)})" if v.collected else ""
        say(
            f"\n✗ No test takes the layer{which}: a test gets the layer under test as its "
            "`kata` argument (def test_something(kata): ...), and the grader runs it once for "
            "each layer."
        )
        return NOT_SOLVED
    if v.stopped:
        say(f"\n✗ {v.stopped}.")
        say(
            "So the other layers were not run: a test must finish, quickly, on every layer. "
            "Fix that test, then grade again."
        )
        return NOT_SOLVED
    count = f"{len(v.tests)} test{'s' if len(v.tests) != 1 else ''}"
    say(f"{count} run against {v.layers} layers, correct and wrong.\n")
    if v.alarms:
        say("False alarms: a test must pass on every correct layer ✗")
        for test in dict.fromkeys(a.test for a in v.alarms):
            mine = [a for a in v.alarms if a.test == test]
            layers = list(dict.fromkeys(describe_layer(a.layer) for a in mine))
            more = f", and {len(layers) - 1} other correct layer{'s' if len(layers) > 2 else ''}"
            say(f"  ✗ {test} fails on {layers[0]}{more if len(layers) > 1 else ''}")
            if mine[0].message:
                say(f"      {mine[0].message}")
    else:
        say("False alarms: none, every test passes on every correct layer ✓")
    if v.unjudged:
        tests = list(v.unjudged)
        named = ", ".join(tests[:3]) + (f" and {len(tests) - 3} more" if len(tests) > 3 else "")
        say(
            f"\nNot judged on some layers: {named}. {next(iter(v.unjudged.values()))} "
            "Their outcome there counts neither as a catch nor as a false alarm."
        )
    say(f"\nInterview mistakes caught: {v.caught} of {len(v.mistakes)}")
    for mistake in v.mistakes:
        mark = "✓" if mistake.caught_by else "✗"
        by = f"  (by {mistake.caught_by})" if mistake.caught_by else ""
        say(f"  {mark} {mistake.words}{by}")
    if v.mutants:
        share = round(100 * v.mutants_caught / v.mutants)
        say(
            f"\nMutants of the reference caught (stretch): {v.mutants_caught} of {v.mutants} "
            f"({share}%)"
        )
    say()
    say(headline(v) + ".")
    missed = [m for m in v.mistakes if m.caught_by is None]
    if v.solved:
        stretch = (
            f" Stretch: {v.mutants - v.mutants_caught} mutants of the reference still pass "
            "your tests."
            if v.mutants_caught < v.mutants
            else ""
        )
        say(f"Solved: your tests catch every interview mistake with no false alarm.{stretch}")
    elif missed:
        steps = hints(kata.suite, missed[0].check)
        if request.hints and steps:
            say(f"\nHint for the first mistake missed ({missed[0].words}):")
            for step in steps[: request.hints]:
                say(f"  {step}")
        if request.hints < len(steps) and not request.mock:
            step = "a hint" if not request.hints else "the next step of the hint"
            if request.watch:
                from norm_katas.engine.report.printer import HINT_KEY

                say(f"Stuck? Press {HINT_KEY} for {step}.")
            else:
                more = suggest.option("--hints" if not request.hints else "--hints 2", request.door)
                say(f"Stuck? Grade again with {more} for {step}.")
    return exit_code(v)
