"""The follow-up questions of a mock interview: followups/<stem>.toml, each `[[followup]]` a
`question` (ending in "?") and its model `answer`, shown after the learner's own."""

from __future__ import annotations

from norm_katas.content import registry


def questions(kata: registry.Kata) -> list[tuple[str, str]]:
    """(question, model answer) of each [[followup]] of the kata, in order; none without a file."""
    if not kata.followups.exists():
        return []
    return [(f["question"], f["answer"]) for f in registry.read_toml(kata.followups)["followup"]]
