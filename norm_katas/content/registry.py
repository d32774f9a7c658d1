"""The kata registry (katas.toml): one entry per kata drives nox, the grader and docs."""

from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 needs `pip install tomli` beside nox
    import tomli as tomllib

# Where the kata content is (katas.toml, stubs/, solutions/, tests/, followups/): a clone's
# root, or, for a norm-katas installed with pip, the copy the package ships in
# norm_katas/_content/ with the same layout (pyproject.toml's wheel target).
_PACKAGE = Path(__file__).resolve().parents[1]
_SHIPPED = _PACKAGE / "_content"
INSTALLED = (_SHIPPED / "katas.toml").is_file()
ROOT = _SHIPPED if INSTALLED else _PACKAGE.parent
REGISTRY = ROOT / "katas.toml"
STUBS = (
    ROOT / "stubs"
)  # the pristine stubs: the tool's copies, never the learner's (content.pristine)

# The learner's workspace: the folder of their kata files. In a clone it is katas/; anywhere,
# `norm-katas init DIR` makes DIR one, marked by this file, found from where the command runs
# upwards; NORM_KATAS_WORKSPACE names one outright.
MARKER = ".norm-katas"
WORKSPACE_ENV = "NORM_KATAS_WORKSPACE"


class NoWorkspace(Exception):
    """No workspace holds the learner's kata files here; str() says how to make one."""


def workspace() -> Path:
    """The folder of the learner's kata files (see MARKER)."""
    if named := os.environ.get(WORKSPACE_ENV):
        return Path(named).expanduser().resolve()
    # nox runs the command in the clone; where the learner typed it is passed on.
    start = Path(os.environ.get("NORM_KATAS_INVOKED_FROM") or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / MARKER).is_file():
            return folder
    if not INSTALLED:
        return ROOT / "katas"
    raise NoWorkspace(
        f"No norm-katas workspace here ({start}): your kata files live in one. Make one with "
        "`norm-katas init [DIR]` (default ./norm-katas) and run norm-katas inside it, or set "
        f"{WORKSPACE_ENV} to its folder; `--impl FILE` grades a file anywhere."
    )


def shown(path: Path) -> str:
    """A path as the learner would type it: katas/<file> in a clone, else from where they are."""
    for base in (ROOT, Path(os.environ.get("NORM_KATAS_INVOKED_FROM") or Path.cwd())):
        try:
            return str(path.resolve().relative_to(base.resolve()))
        except ValueError:
            continue
    return str(path)


FIELDS = ("name", "title", "difficulty", "minutes", "requires")


@dataclass(frozen=True)
class Kata:
    """One entry of the registry. Every part of a kata is named after it (`parts()` lists them):
    the kata "prepost-norm" is katas/prepost_norm.py (also in stubs/ and solutions/),
    tests/test_prepost_norm.py, tests/catalogue/prepost_norm/, followups/prepost_norm.toml and
    notebooks/prepost_norm.ipynb (also in stubs/notebooks/)."""

    name: str  # nox session is kata-<name>
    title: str
    difficulty: str
    minutes: int
    # Extra packages this kata's grading needs (pip requirement strings), installed into the
    # grading environment by its nox session only: e.g. ["triton>=3.0"].
    requires: tuple[str, ...] = field(default=())

    @property
    def triton(self) -> bool:
        """Whether its layers are Triton kernels (checks.triton_engine runs them)."""
        return any(req.startswith("triton") for req in self.requires)

    @property
    def stem(self) -> str:
        """The name as a Python identifier: "prepost-norm" -> "prepost_norm"."""
        return self.name.replace("-", "_")

    @property
    def file(self) -> str:
        """The same file name in katas/, stubs/ and solutions/."""
        return f"{self.stem}.py"

    @property
    def stub(self) -> Path:
        """The learner's working file, in their workspace: whatever they made of the stub."""
        return workspace() / self.file

    @property
    def committed(self) -> Path:
        """katas/<file> of the repository, as committed for learners (authors' commands)."""
        return ROOT / "katas" / self.file

    @property
    def pristine(self) -> Path:
        """The tool's copy of the untouched stub (read it through content.pristine.text)."""
        return STUBS / self.file

    @property
    def solution(self) -> Path:
        return ROOT / "solutions" / self.file

    # The test-writing mode: the learner's tests of the kata's layer, tests/test_<stem>.py in
    # the workspace, with its pristine copy in stubs/tests/ and the reference in solutions/tests/.
    @property
    def tests_file(self) -> str:
        return f"tests/test_{self.stem}.py"

    @property
    def tests_stub(self) -> Path:
        """The learner's test file, in their workspace (katas/tests/ in a clone)."""
        return workspace() / self.tests_file

    @property
    def tests_pristine(self) -> Path:
        return STUBS / self.tests_file

    @property
    def tests_solution(self) -> Path:
        """The reference test file: it catches every interview mistake, with no false alarm."""
        return ROOT / "solutions" / self.tests_file

    @property
    def suite(self) -> Path:
        return ROOT / "tests" / f"test_{self.stem}.py"

    @property
    def catalogue(self) -> Path:
        """The folder of wrong (and ok_) implementations that prove the suite's checks."""
        return ROOT / "tests" / "catalogue" / self.stem

    @property
    def followups(self) -> Path:
        """The questions asked after a mock interview, with their model answers."""
        return ROOT / "followups" / f"{self.stem}.toml"

    @property
    def notebook(self) -> Path:
        """The learner's working copy of the kata's notebook, in a clone."""
        return ROOT / "notebooks" / f"{self.stem}.ipynb"

    @property
    def pristine_notebook(self) -> Path:
        """The tool's copy of the kata's notebook, as generated (authoring.notebook_writer)."""
        return STUBS / "notebooks" / f"{self.stem}.ipynb"

    @property
    def mutants(self) -> Path:
        """The mutants ledger: the changes to the solution that no correct suite could reject,
        each with why. Only a kata that has such mutants has one."""
        return ROOT / "tests" / "mutants" / f"{self.stem}.toml"

    def parts(self) -> dict[str, Path]:
        """Every part of the kata, by role, in a clone: what `nox -s new-kata` writes (all but
        the mutants ledger, which comes with the first equivalent mutant)."""
        return {
            "stub": self.pristine, "learner's file": self.committed, "solution": self.solution,
            "suite": self.suite, "catalogue": self.catalogue, "follow-ups": self.followups,
            "notebook": self.pristine_notebook, "learner's notebook": self.notebook,
        }  # fmt: skip


def read_toml(path: Path) -> dict[str, Any]:
    with path.open("rb") as f:
        return tomllib.load(f)


_loaded: tuple[tuple[int, int], list[Kata]] | None = None


def load() -> list[Kata]:
    """The registry's katas. Parsed again only when katas.toml changed: a grading asks for the
    kata of its suite once per check, and a forked child finds the warm parent's copy."""
    global _loaded
    stat = REGISTRY.stat()
    key = (stat.st_mtime_ns, stat.st_size)
    if _loaded is None or _loaded[0] != key:
        _loaded = (key, _parse())
    return list(_loaded[1])


def _parse() -> list[Kata]:
    katas = []
    for entry in read_toml(REGISTRY)["kata"]:
        if unknown_keys := sorted(set(entry) - set(FIELDS)):
            raise ValueError(
                f"katas.toml: the kata {entry.get('name')!r} has keys no kata has "
                f"({', '.join(unknown_keys)}); a kata's keys are {', '.join(FIELDS)} (its files "
                "are named after its name)"
            )
        katas.append(Kata(**{**entry, "requires": tuple(entry.get("requires", ()))}))
    return katas


def for_suite(path: str | os.PathLike[str]) -> Kata | None:
    """The kata whose suite is the file at `path` (tests/test_<stem>.py), if any."""
    found = Path(path).resolve()
    return next((kata for kata in load() if kata.suite == found), None)


SETTING = "[tool.norm-katas] repository in pyproject.toml"
_GITHUB = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def repository() -> str | None:
    """The published repository's address (SETTING): where a notebook's setup cell installs
    norm-katas from and where Colab opens the notebooks. None while it is empty: nothing is
    installed from, and no link points at, an address nobody set deliberately."""
    table = read_toml(ROOT / "pyproject.toml").get("tool", {}).get("norm-katas", {})
    address = str(table.get("repository", "")).strip().rstrip("/").removesuffix(".git")
    if address and not _GITHUB.fullmatch(address):
        raise ValueError(
            f"{SETTING} is {address!r}: it must be https://github.com/OWNER/NAME (Colab opens "
            "notebooks from GitHub), or empty while the repository is not published."
        )
    return address or None


def notebook(kata: Kata) -> str:
    """The kata's notebook, relative to the repository (notebooks/, generated)."""
    return f"notebooks/{kata.stem}.ipynb"


def colab(kata: Kata) -> str | None:
    """The address that opens the kata's notebook in Colab, from the repository's main branch;
    None while the repository's address is not set."""
    if (address := repository()) is None:
        return None
    github = address.removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{github}/blob/main/{notebook(kata)}"


def links(kata: Kata) -> str:
    """The README table's links to a kata's notebook: in the repository, and in Colab once the
    repository's address is set."""
    here = f"[open]({notebook(kata)})"
    return f"{here} · [Colab]({address})" if (address := colab(kata)) else here


def kata_table() -> str:
    """The README's kata table (`python -m norm_katas list --markdown`)."""
    rows = [
        "| nox session | file | notebook | kata | difficulty | minutes |",
        "|---|---|---|---|---|---|",
    ]
    for k in load():
        rows.append(
            f"| `kata-{k.name}` | `katas/{k.file}` | {links(k)} "
            f"| {k.title} | {k.difficulty} | {k.minutes} |"
        )
    return "\n".join(rows)


def get(name: str) -> Kata:
    """Find a kata by its name ("prepost-norm") or its file stem ("prepost_norm")."""
    for kata in load():
        if name in (kata.name, kata.stem):
            return kata
    raise KeyError(unknown(name))


def unknown(name: str) -> str:
    """The message for a kata name that is not in the registry: the closest name, and all."""
    names = [k.name for k in load()]
    close = difflib.get_close_matches(name.removeprefix("kata-"), names, n=1, cutoff=0.6)
    guess = f"did you mean {close[0]!r}? " if close else ""
    return f"no kata named {name!r}; {guess}the katas are: {', '.join(names)}"
