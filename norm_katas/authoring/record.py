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


def problems() -> list[str]:
    """What is wrong with the pristine stubs and their record, each with what to do."""
    record = recorded()
    katas = registry.load()
    found = []
    for kata in katas:
        shipped, digest = _read(kata.pristine), record.get(kata.file)
        if shipped is None:
            found.append(f"stubs/{kata.file} is missing: every kata needs its pristine stub there.")
        elif digest is None:
            found.append(f"stubs/{kata.file} has no recorded hash: run `{RECORD_COMMAND}`.")
        elif blob_id(shipped) != digest:
            found.append(
                f"stubs/{kata.file} is not the stub recorded in stubs/hashes.txt. If you changed "
                f"the stub on purpose, record it: `{RECORD_COMMAND}` (it refreshes "
                f"katas/{kata.file} too). If not, restore it: `git checkout stubs/{kata.file}`."
            )
        elif _held_in_katas(kata, digest) is False:
            found.append(
                f"katas/{kata.file} has never held the stub in stubs/{kata.file}, not now and "
                f"not in any commit, so a fresh clone would start from another text. Run `nox -s "
                f"reset -- {kata.name}` (your file is backed up first), then commit "
                f"katas/{kata.file}."
            )
    if extra := sorted(set(record) - {k.file for k in katas}):
        names = ", ".join(extra)
        found.append(f"stubs/hashes.txt records files of no kata ({names}): `{RECORD_COMMAND}`.")
    return found


def record() -> list[str]:
    """Record every stubs/<file> as its kata's pristine stub; refresh katas/<file> where it is
    still the stub recorded before. Returns what it did, one line each."""
    before = recorded()
    katas = registry.load()
    if missing := [k.file for k in katas if not k.pristine.exists()]:
        raise StubError(f"no stubs/ copy of {', '.join(missing)}: write the stub there first")
    texts = {k.file: k.pristine.read_text(encoding="utf-8") for k in katas}
    lines = [f"{blob_id(texts[name])}  {name}\n" for name in sorted(texts)]
    _write(RECORD, HEADER + "".join(lines))
    done = []
    for kata in katas:
        new, old = blob_id(texts[kata.file]), before.get(kata.file)
        if new == old:
            continue
        done.append(f"recorded stubs/{kata.file}")
        current = _read(kata.committed)
        if current is not None and blob_id(current) == new:
            continue
        if current is None or blob_id(current) == old:
            _write(kata.committed, texts[kata.file])
            done.append(f"  katas/{kata.file} is the new stub too: commit both")
        else:
            done.append(
                f"  katas/{kata.file} holds other work, left as it is: `nox -s reset -- "
                f"{kata.name}` makes it the new stub (backing it up first); commit both"
            )
    return done


def _write(path: os.PathLike[str], content: str) -> None:
    tmp = f"{os.fspath(path)}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(content)
    os.replace(tmp, path)


def _held_in_katas(kata: registry.Kata, digest: str) -> bool | None:
    """Whether katas/<file> holds the stub now or did in some commit (None: no git history)."""
    return held(kata.committed, digest)


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
