"""The learner's files: fresh stubs, resets that back up first, scratch copies for mocks.

The untouched stub of a kata is read from git (the newest committed version of katas/<file>
that is still a stub), so a learner's edits in katas/ never hide it. Nothing here deletes
or overwrites learner work without a verified backup.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime
from pathlib import Path

from grader import registry
from practice import history

STUB_MARK = "raise NotImplementedError"
# The stub's section that gives the answers away: hidden in a mock, shown after it.
PITFALLS = "Pitfalls interviewers probe"


class WorkspaceError(Exception):
    """str() is the message for the learner."""


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=registry.ROOT, capture_output=True, text=True, check=True
    ).stdout


def pristine_stub(kata: registry.Kata) -> str:
    """The untouched stub's text."""
    rel = f"katas/{kata.file}"
    try:
        commits = _git("log", "--format=%H", "--", rel).split()
        for commit in commits:  # newest first; skips commits of the learner's own attempts
            text = _git("show", f"{commit}:{rel}")
            if STUB_MARK in text:
                return text
    except (OSError, subprocess.CalledProcessError):
        pass
    if kata.stub.exists() and STUB_MARK in (text := kata.stub.read_text()) and not _modified(rel):
        return text
    raise WorkspaceError(
        f"cannot find the original stub of {rel}: this needs a git clone of norm-katas "
        "(git log finds no committed stub)."
    )


def _modified(rel: str) -> bool:
    try:
        return bool(_git("status", "--porcelain", "--", rel).strip())
    except (OSError, subprocess.CalledProcessError):
        return True  # without git we cannot tell, so do not trust the working file


def _stamp() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S-%f")


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def reset(kata: registry.Kata) -> Path | None:
    """Restore katas/<file> to the stub; back the current file up first. Returns the backup."""
    stub = pristine_stub(kata)
    current = kata.stub.read_text(encoding="utf-8") if kata.stub.exists() else None
    if current == stub:
        return None
    backup = None
    if current is not None:
        backup = history.data_dir() / "backups" / f"{_stamp()}-{kata.name}" / kata.file
        backup.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(backup, current)
        if backup.read_text(encoding="utf-8") != current:  # never overwrite without a good copy
            raise WorkspaceError(f"the backup {backup} could not be verified; nothing was reset")
    _write_atomically(kata.stub, stub)
    return backup


def split_pitfalls(stub: str) -> tuple[str, str]:
    """(the stub without its pitfalls section, that section's text) from a stub's docstring.

    A section is a title line underlined with dashes; it runs to the next such title.
    """
    lines = stub.splitlines(keepends=True)

    def is_title(i: int) -> bool:
        under = lines[i + 1].strip() if i + 1 < len(lines) else ""
        return bool(lines[i].strip()) and len(under) >= 3 and set(under) == {"-"}

    start = next((i for i in range(len(lines)) if is_title(i) and PITFALLS in lines[i]), None)
    if start is None:
        return stub, ""
    end = next((i for i in range(start + 2, len(lines)) if is_title(i)), len(lines))
    section = "".join(lines[start + 2 : end]).strip("\n")
    return "".join(lines[:start] + lines[end:]), section


def scratch_copy(kata: registry.Kata) -> Path:
    """A fresh stub for a mock interview, in a new scratch folder outside katas/.

    It has the task and the contract only: the pitfalls come after the mock.
    """
    path = history.data_dir() / "mock" / f"{_stamp()}-{kata.name}" / kata.file
    path.parent.mkdir(parents=True)
    _write_atomically(path, split_pitfalls(pristine_stub(kata))[0])
    return path


def show_solution(kata: registry.Kata) -> str:
    """The reference solution's text; peeking is recorded in the history."""
    history.record(kata.name, "peek")
    return kata.solution.read_text(encoding="utf-8")
