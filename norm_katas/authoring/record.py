"""Recording the pristine stubs (`python -m norm_katas stubs [--record]`): an author who edits
stubs/<file> records its hash in stubs/hashes.txt, which refreshes the learner's katas/<file>
where it is still the stub recorded before; without --record, each problem with the stubs and
their record is named. See norm_katas.content.pristine for why the stubs are kept this way.
"""

from __future__ import annotations

import os
from pathlib import Path

from norm_katas.content import registry
from norm_katas.content.pristine import (
    HEADER,
    RECORD,
    RECORD_COMMAND,
    StubError,
    _git,
    _read,
    blob_id,
    recorded,
)


def stubs(kata: registry.Kata) -> list[tuple[str, Path, Path, str]]:
    """The kata's pristine stubs: (name in the record, the tool's copy, the learner's copy in
    katas/, the reset that restores it): the layer's stub, and the test-writing mode's where
    the kata has that mode (stubs/tests/test_<stem>.py)."""
    found = [(kata.file, kata.pristine, kata.committed, kata.name)]
    if kata.tests_pristine.exists():
        mine = registry.ROOT / "katas" / kata.tests_file
        found.append((kata.tests_file, kata.tests_pristine, mine, f"{kata.name} --tests"))
    return found


def problems() -> list[str]:
    """What is wrong with the pristine stubs and their record, each with what to do."""
    record = recorded()
    katas = registry.load()
    found = []
    for kata in katas:
        for name, pristine, committed, reset in stubs(kata):
            found += _problems(name, pristine, committed, reset, record.get(name))
    if extra := sorted(set(record) - {s[0] for k in katas for s in stubs(k)}):
        names = ", ".join(extra)
        found.append(f"stubs/hashes.txt records files of no kata ({names}): `{RECORD_COMMAND}`.")
    return found


def _problems(
    name: str, pristine: Path, committed: Path, reset: str, digest: str | None
) -> list[str]:
    shipped = _read(pristine)
    if shipped is None:
        return [f"stubs/{name} is missing: every kata needs its pristine stub there."]
    if digest is None:
        return [f"stubs/{name} has no recorded hash: run `{RECORD_COMMAND}`."]
    if blob_id(shipped) != digest:
        return [
            f"stubs/{name} is not the stub recorded in stubs/hashes.txt. If you changed "
            f"the stub on purpose, record it: `{RECORD_COMMAND}` (it refreshes "
            f"katas/{name} too). If not, restore it: `git checkout stubs/{name}`."
        ]
    if held(committed, digest) is False:
        return [
            f"katas/{name} has never held the stub in stubs/{name}, not now and "
            f"not in any commit, so a fresh clone would start from another text. Run `nox -s "
            f"reset -- {reset}` (your file is backed up first), then commit katas/{name}."
        ]
    return []


def record() -> list[str]:
    """Record every stubs/<file> as its kata's pristine stub; refresh katas/<file> where it is
    still the stub recorded before. Returns what it did, one line each."""
    before = recorded()
    every = [s for k in registry.load() for s in stubs(k)]
    if missing := [name for name, pristine, _, _ in every if not pristine.exists()]:
        raise StubError(f"no stubs/ copy of {', '.join(missing)}: write the stub there first")
    texts = {name: pristine.read_text(encoding="utf-8") for name, pristine, _, _ in every}
    lines = [f"{blob_id(texts[name])}  {name}\n" for name in sorted(texts)]
    _write(RECORD, HEADER + "".join(lines))
    done = []
    for name, _, committed, reset in every:
        new, old = blob_id(texts[name]), before.get(name)
        if new == old:
            continue
        done.append(f"recorded stubs/{name}")
        current = _read(committed)
        if current is not None and blob_id(current) == new:
            continue
        if current is None or blob_id(current) == old:
            committed.parent.mkdir(parents=True, exist_ok=True)
            _write(committed, texts[name])
            done.append(f"  katas/{name} is the new stub too: commit both")
        else:
            done.append(
                f"  katas/{name} holds other work, left as it is: `nox -s reset -- "
                f"{reset}` makes it the new stub (backing it up first); commit both"
            )
    return done


def _write(path: os.PathLike[str], content: str) -> None:
    tmp = f"{os.fspath(path)}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(content)
    os.replace(tmp, path)


def held(path: Path, digest: str) -> bool | None:
    """Whether the learner's file at `path` (katas/<file>, notebooks/<stem>.ipynb) holds the
    text with blob id `digest` now or did in some commit (None: no git history). What a fresh
    clone starts from, found without judging what the learner wrote there since."""
    current = _read(path)
    if current is not None and blob_id(current) == digest:
        return True
    rel = path.relative_to(registry.ROOT).as_posix()
    commits = (_git("log", "--format=%H", "--", rel) or b"").decode().split()
    if not commits:
        return None
    out = _git(
        "cat-file", "--batch-check=%(objectname)", stdin="".join(f"{c}:{rel}\n" for c in commits)
    )
    return None if out is None else digest in out.decode().split()
