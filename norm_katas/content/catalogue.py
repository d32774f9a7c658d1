"""The catalogue's index: tests/catalogue/<stem>/ holds, for each kata, wrong implementations
(each making one mistake) and `ok_*.py` files (correct, written differently), which the
self-tests grade to prove every check both ways; tests/catalogue/broken/ and uses_reference/
hold files that must get a clean failing report.

A file says what it proves in module-level strings (docs/writing-a-kata.md, the catalogue
rules): `EXPECT` the check that must fail and be the headline ("pass" for an ok_ file, "broken"
for a broken one), `ALSO` the broad checks it fails as well, `SAYS` words the report must show,
`COMPILED` what its mistake shows compiled on a GPU, `RULE` the code rule it breaks where its
values are right (a learner's tests of behaviour cannot see it: the test-writing mode leaves it
out).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from norm_katas.content import registry

FOLDER = registry.ROOT / "tests" / "catalogue"
NAMES = ("EXPECT", "ALSO", "SAYS", "COMPILED", "RULE")
MARKER = re.compile(r"""\b(EXPECT|ALSO|SAYS|COMPILED|RULE)\s*=\s*["']([^"']+)["']""")
PASS = "pass"  # an ok_ file's EXPECT


def markers(path: Path) -> dict[str, str]:
    """The file's markers, by name (EXPECT, ALSO, SAYS, COMPILED, RULE): module-level strings
    (a long one in parentheses, over several lines), or, in a file that must not run as written
    (a broken file's syntax error), on a comment line."""
    text = path.read_text(encoding="utf-8")
    found = dict(MARKER.findall(text))
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return found
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(target := node.targets[0], ast.Name)
            and target.id in NAMES
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found[target.id] = node.value.value
    return found


@dataclass(frozen=True)
class Entry:
    """One catalogue file and what it says it proves."""

    path: Path
    expect: str  # the check that must be the headline; "pass" for an ok_ file
    also: tuple[str, ...] = ()  # broad checks it must fail as well
    says: str | None = None
    compiled: str | None = None
    rule: str | None = None  # the code rule it breaks where its values are right

    @property
    def correct(self) -> bool:
        return self.expect == PASS

    @classmethod
    def read(cls, path: Path) -> Entry:
        found = markers(path)
        also = tuple(n.strip() for n in found.get("ALSO", "").split(",") if n.strip())
        return cls(
            path, found.get("EXPECT", ""), also, found.get("SAYS"), found.get("COMPILED"),
            found.get("RULE"),
        )  # fmt: skip


def files(kata: registry.Kata) -> list[Path]:
    """The kata's catalogue files, wrong and ok_, sorted by name."""
    return sorted(kata.catalogue.glob("*.py"))


def entries(kata: registry.Kata) -> list[Entry]:
    return [Entry.read(path) for path in files(kata)]


def broken() -> list[Path]:
    """The files that must get a clean failing report: broken ones, and ones built on the
    reference solution outside the catalogue's own folders (both graded as LayerNorms)."""
    return [
        *sorted((FOLDER / "broken").glob("*.py")),
        *sorted((FOLDER / "uses_reference").glob("*.py")),
    ]
