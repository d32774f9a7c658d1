"""Turn check outcomes into the learner-facing verdict (and a JSON record of it).

Each job lives in a module of its own:

- data: the report itself (Check, Report, the Outcome, Kind and Tier words), the verdict it
  adds up to (solved, the headline, the failures folded under it: Fold), and its JSON.
- hints: a check's docstring split into description and hints, and the hints that fit a
  failure (choose_hints); a hint holds no code (CODE_IN_HINT).
- failures: a failed check's exception in the learner's words (explain, raised_at).
- printer: the verdict on a terminal (Printer), check by check, then the headline.

The rest of the package imports what it needs from here; a test of one module's workings (the
hints' texts and patterns) imports them from that module.
"""

from norm_katas.engine.report.data import (
    CORE,
    CRASH,
    FAIL,
    INFO,
    PARITY,
    TIER_TITLES,
    TIMEOUT,
    TODO,
    Check,
    Fold,
    Kind,
    Outcome,
    Report,
    Tier,
    exit_code,
    unstarted_json,
    untouched,
)
from norm_katas.engine.report.failures import explain, raised_at
from norm_katas.engine.report.hints import choose_hints, describe
from norm_katas.engine.report.printer import Printer

__all__ = [
    "CORE",
    "CRASH",
    "FAIL",
    "INFO",
    "PARITY",
    "TIER_TITLES",
    "TIMEOUT",
    "TODO",
    "Check",
    "Fold",
    "Kind",
    "Outcome",
    "Printer",
    "Report",
    "Tier",
    "choose_hints",
    "describe",
    "exit_code",
    "explain",
    "raised_at",
    "unstarted_json",
    "untouched",
]
