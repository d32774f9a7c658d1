"""Watch mode (`nox -s kata-<name> -- --watch`): regrade on every save, like rustlings watch.

The grader stays warm: torch and the kata's checks are imported once, and each save is graded
in a child forked from this process, so a verdict takes about as long as the checks themselves.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

from norm_katas.engine import runner, suggest
from norm_katas.engine.request import Request
from norm_katas.practice import grading, loop
from norm_katas.runtime import loader


def run(request: Request) -> int:
    """Watch the request's file (Request.parse found it there) and grade each save; the hint key
    grades again with one more hint step (the idea, then the formula), kept for later saves."""
    path = request.file
    try:  # the line too: a Ctrl-C as soon as it shows lands before warm_up's first step
        print(f"Starting the grader for {request.kata.title}...", flush=True)
        runner.warm_up([request.kata], long_lived=True, device=request.device)
    except runner.GraderError as e:
        print(e, file=sys.stderr)
        return runner.GRADER_FAILED
    except KeyboardInterrupt:
        print("\nStopped (Ctrl-C) while the grader was starting: nothing was graded.")
        return 130
    shown = loader.display_path(path)
    watched = loop.WatchedFile(path)
    keys = loop.Keys()
    stops = loop.stops_grading(watched, keys)

    def more_hints() -> None:
        nonlocal request
        request = replace(request, hints=min(2, request.hints + 1))
        grade()

    def grade() -> None:
        loop.clear_screen()
        outcome = grading.grade(request, mode="practice", cancel=stops)
        if outcome.cancelled:  # saved again (graded next) or q (the loop ends)
            if keys.pending != "q":
                print("\nSaved again: this grading was stopped; grading the new version.")
            return
        when = time.strftime("%H:%M:%S")
        print(
            f"\n[{when}] Watching {shown}: save it to grade again · Enter grades now · "
            "q or Ctrl-C leaves",
            flush=True,
        )
        if outcome.code == runner.USAGE:
            raise SystemExit(outcome.code)  # the options are wrong: every save would say so

    try:
        with keys.cbreak():
            grade()
            loop.run(watched, keys, lambda: grade(), lambda: None, lambda: more_hints())
    except KeyboardInterrupt:
        pass
    print(f"\nLeft watch mode. Your gradings are in your history: {suggest.command('progress')}")
    return 0
