"""Watch mode (`nox -s kata-<name> -- --watch`): regrade on every save, like rustlings watch.

The grader stays warm: torch and the kata's checks are imported once, and each save is graded
in a child forked from this process, so a verdict takes about as long as the checks themselves.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from norm_katas.grader import loader, registry, runner
from norm_katas.practice import grading, loop


def run(kata: registry.Kata, args: list[str]) -> int:
    impl, _ = runner.pop_option(args, "--impl")
    base = Path(os.environ.get("NORM_KATAS_INVOKED_FROM", Path.cwd()))
    path = registry.resolve_impl(kata, impl, base)
    if not path.is_file():
        print(f"{path} does not exist: nothing to watch.", file=sys.stderr)
        return runner.USAGE
    print(f"Starting the grader for {kata.title}...", flush=True)
    try:
        runner.warm_up([kata], long_lived=True)
    except runner.GraderError as e:
        print(e, file=sys.stderr)
        return runner.GRADER_FAILED
    shown = loader.display_path(path)
    watched = loop.WatchedFile(path)
    keys = loop.Keys()
    stops = loop.stops_grading(watched, keys)

    def grade() -> None:
        loop.clear_screen()
        outcome = grading.grade(kata, args, mode="practice", cancel=stops)
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
            loop.run(watched, keys, lambda: grade(), lambda: None)
    except KeyboardInterrupt:
        pass
    print("\nLeft watch mode. Your gradings are in your history: nox -s progress")
    return 0
