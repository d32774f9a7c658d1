"""The learner's file for a kata's suite: which kata a suite is, and the learner's module,
imported once per run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from norm_katas.content import registry
from norm_katas.runtime import limits
from norm_katas.runtime.loader import LearnerModule, LoadError, display_path, load_file


def kata_of(module: Any) -> registry.Kata | None:
    """The kata whose suite `module` is, from its file name: tests/test_<kata>.py."""
    path = getattr(module, "__file__", None)
    return registry.for_suite(path) if path else None


class Learners:
    """The learner's files, each imported once per run: a file that does not import fails
    every check that needs it, with one message."""

    def __init__(self) -> None:
        self.loaded: dict[Path, LearnerModule | LoadError] = {}

    def load(self, kata: registry.Kata, path: Path) -> LearnerModule | LoadError:
        if path not in self.loaded:
            try:
                module = load_file(path, f"norm_katas_learner_{kata.stem}")
                self.loaded[path] = LearnerModule(module, path)
            except limits.TimedOut as e:  # the check's time limit ran out during the import
                advice = "loop forever" if e.busy else "sleep, or wait for input or a lock"
                self.loaded[path] = LoadError(
                    f"importing {display_path(path)} did not finish in time: {e.detail}\n"
                    f"Does top-level code {advice}?"
                )
            except LoadError as e:
                self.loaded[path] = e
        return self.loaded[path]
