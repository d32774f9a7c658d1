"""The kata registry (katas/katas.toml): one entry per kata drives nox, the grader and docs."""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 needs `pip install tomli` beside nox
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "katas" / "katas.toml"
STUBS = ROOT / "stubs"  # the pristine stubs: the tool's copies, never the learner's (grader.stubs)


@dataclass(frozen=True)
class Kata:
    name: str  # nox session is kata-<name>
    title: str
    file: str  # same file name in katas/, stubs/ and solutions/
    difficulty: str
    minutes: int
    # Extra packages this kata's grading needs (pip requirement strings), installed into the
    # grading environment by its nox session only: e.g. ["triton>=3.0"].
    requires: tuple[str, ...] = field(default=())

    @property
    def stub(self) -> Path:
        """The learner's working file: whatever they made of the stub."""
        return ROOT / "katas" / self.file

    @property
    def pristine(self) -> Path:
        """The tool's copy of the untouched stub (read it through norm_katas.grader.stubs.text)."""
        return STUBS / self.file

    @property
    def solution(self) -> Path:
        return ROOT / "solutions" / self.file

    @property
    def suite(self) -> Path:
        return ROOT / "tests" / f"test_{Path(self.file).stem}.py"


def load() -> list[Kata]:
    with REGISTRY.open("rb") as f:
        entries = tomllib.load(f)["kata"]
    return [Kata(**{**entry, "requires": tuple(entry.get("requires", ()))}) for entry in entries]


def get(name: str) -> Kata:
    """Find a kata by its name ("prepost-norm") or its file stem ("prepost_norm")."""
    for kata in load():
        if name in (kata.name, Path(kata.file).stem):
            return kata
    raise KeyError(unknown(name))


def unknown(name: str) -> str:
    """The message for a kata name that is not in the registry: the closest name, and all."""
    names = [k.name for k in load()]
    close = difflib.get_close_matches(name.removeprefix("kata-"), names, n=1, cutoff=0.6)
    guess = f"did you mean {close[0]!r}? " if close else ""
    return f"no kata named {name!r}; {guess}the katas are: {', '.join(names)}"
