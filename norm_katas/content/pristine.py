"""The pristine stubs: the tool's own copies, identified by their content.

katas/<file> is the learner's. They edit it, commit it (`git commit -am`), keep a helper that
raises NotImplementedError in it, as the BatchNorm stub suggests; nothing the tool decides may
rest on what that file contains. The untouched stub of each kata is stubs/<file>, and
stubs/hashes.txt records each one's content hash:
- reset and the mock hand out stubs/<file> once its hash is the recorded one, with or without
  git; if that copy was edited by mistake, the recorded content is taken from git's objects;
- "is this file the untouched stub?" (reset's "nothing to do", the grader's "Not started yet?")
  compares hashes, which an attempt does not match by accident;
- a self-test fails when stubs/<file> and its record differ: an author who edits a stub records
  it with `python -m norm_katas stubs --record`, which also refreshes katas/<file>.

Why a copy beside the machinery and not only hashes with the text found in git: an author's
edit of katas/<file> cannot be told from a learner's, so the stub an author edits must live
where learners do not write; and the copy serves an installed norm-katas without git. The cost
is two copies of each stub in a clone, kept equal by the record command.

The hash is git's blob id of the text with LF line endings (what `git hash-object` prints for
the file), so `git cat-file blob <id>` finds that content in a clone, whatever its path.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
from pathlib import Path

from norm_katas.content import registry

RECORD = registry.STUBS / "hashes.txt"
RECORD_COMMAND = "python -m norm_katas stubs --record"
# The stub's section that gives the answers away: hidden in a mock, shown after it.
PITFALLS = "Pitfalls interviewers probe"
HEADER = f"""\
# The pristine stubs: git's blob id of each stubs/<file> (its text with LF line endings),
# as `git hash-object stubs/<file>` prints it. Written by `{RECORD_COMMAND}`;
# a self-test fails when a stub and its record differ. See norm_katas/content/pristine.py.
"""


NOTEBOOKS = "notebooks"  # the learner's working copies of the kata notebooks, in a clone
PRISTINE_NOTEBOOKS = "stubs/notebooks"  # the tool's copies (authoring.notebook_writer writes them)


def notebook_folder() -> Path:
    """The tool's pristine notebooks, one per kata."""
    return registry.ROOT / PRISTINE_NOTEBOOKS


def learners_folder() -> Path:
    """The learner's notebooks: a clone's notebooks/ (an installed copy has none)."""
    return registry.ROOT / NOTEBOOKS


class StubError(Exception):
    """str() is the message for the learner."""


def blob_id(text: str) -> str:
    """git's blob id of `text` with LF line endings: the same for a checkout with CRLF."""
    data = text.replace("\r\n", "\n").encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def recorded() -> dict[str, str]:
    """File name -> the recorded blob id of its pristine stub."""
    try:
        lines = RECORD.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return {}
    pairs = (line.split(maxsplit=1) for line in lines if line.strip() and line[0] != "#")
    return {name.strip(): digest for digest, name in pairs}


def text(kata: registry.Kata) -> str:
    """The kata's untouched stub: the tool's copy if it is the recorded one, else git's."""
    digest = recorded().get(kata.file)
    if digest is None:
        raise StubError(f"stubs/hashes.txt records no stub for {kata.file}: run `{RECORD_COMMAND}`")
    shipped = _read(kata.pristine)
    if shipped is not None and blob_id(shipped) == digest:
        return shipped
    found = _git_blob(digest)
    if found is not None:
        return found
    raise StubError(
        f"stubs/{kata.file}, norm-katas' own copy of the untouched stub, has been changed, and "
        f"git has no copy of the original either. Restore it: `git checkout stubs/{kata.file}` "
        f"in a clone, or take stubs/{kata.file} from a fresh download of norm-katas. "
        f"(katas/{kata.file} is the copy that is yours to edit.)"
    )


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


# The stub's last lines say how to grade it in katas/; a mock's copy is graded on save instead.
GRADE_YOURSELF = re.compile(r"^Grade yourself with::\n\n(?:    nox -s .*\n)+", re.MULTILINE)
GRADED_IN_THE_MOCK = (
    "Saving this file grades it; so does Enter in the mock's terminal, where q stops the mock.\n"
)
# ... and a notebook's mock (%kata_mock) grades the cell when it runs.
GRADED_IN_A_NOTEBOOK_MOCK = (
    "Running this cell grades it (no options during the mock); `%kata_mock --stop` ends the mock.\n"
)


def for_workspace(stub: str, name: str, tests: bool = False) -> str:
    """The stub as an installed copy hands it out (`norm-katas init`, `norm-katas reset`): graded
    with the norm-katas command, which is there, not with nox's session, which is not. `tests`:
    the test-writing mode's stub, graded with --tests."""
    command = f"norm-katas grade {name}" + (" --tests" if tests else "")
    return GRADE_YOURSELF.sub(f"Grade yourself with::\n\n    {command}\n", stub, 1)


def for_notebook(stub: str, name: str) -> str:
    """The stub as a notebook's %%kata cell holds it: its docstring, which the notebook shows
    as Markdown above the cell, cut to its title and how a cell is graded."""
    tree = ast.parse(stub)
    doc = ast.get_docstring(tree, clean=False)
    if doc is None:
        return stub
    node = tree.body[0]
    lines = stub.splitlines(keepends=True)
    title = doc.strip().splitlines()[0]
    short = (
        f'"""{title} The task and its contract: the text above this cell.\n\n'
        f"Run this cell to grade it (its first line, %%kata {name}, grades it). After the name,\n"
        '--hints gives a hint, --all every failure, --device cuda grades on a GPU.\n"""\n'
    )
    return "".join([*lines[: node.lineno - 1], short, *lines[node.end_lineno :]])


def for_mock(stub: str, graded: str = GRADED_IN_THE_MOCK) -> str:
    """The stub as a mock interview hands it out: without its pitfalls (they come after the
    mock), and saying how it is graded there (`graded`), not how katas/ is."""
    return GRADE_YOURSELF.sub(graded, split_pitfalls(stub)[0], count=1)


def untouched(kata: registry.Kata, content: str) -> bool:
    """Whether `content` is the kata's stub as the tool hands it out: as reset restores it, as
    `norm-katas init` writes it (for_workspace), as the mock gives it (for_mock), or as a
    notebook's cell holds it (for_notebook). Decided by hash, never by what it contains."""
    digest = recorded().get(kata.file)
    if digest is None:
        return False
    mine = blob_id(content)
    if mine == digest:
        return True
    try:
        stub = text(kata)
    except StubError:
        return False
    # As a mock hands it out, in a terminal or a notebook; a mock's copy from before it said how
    # it is graded counts too; as a notebook's %%kata cell holds it.
    mock_cell = for_mock(stub, GRADED_IN_A_NOTEBOOK_MOCK)
    handed_out = (
        for_mock(stub), mock_cell, split_pitfalls(stub)[0], for_notebook(stub, kata.name),
        for_workspace(stub, kata.name),
    )  # fmt: skip
    return mine in {blob_id(text) for text in handed_out}


def tests_text(kata: registry.Kata) -> str:
    """The kata's untouched test stub (the test-writing mode), as text() finds the layer's."""
    digest = recorded().get(kata.tests_file)
    if digest is None:
        raise StubError(
            f"stubs/hashes.txt records no stub for {kata.tests_file}: run `{RECORD_COMMAND}`"
        )
    shipped = _read(kata.tests_pristine)
    if shipped is not None and blob_id(shipped) == digest:
        return shipped
    if (found := _git_blob(digest)) is not None:
        return found
    raise StubError(
        f"stubs/{kata.tests_file}, norm-katas' own copy of the untouched test stub, has been "
        f"changed, and git has no copy of the original either. Restore it: `git checkout "
        f"stubs/{kata.tests_file}` in a clone, or take it from a fresh download of norm-katas."
    )


def is_untouched_tests(kata: registry.Kata, path: os.PathLike[str]) -> bool:
    """Whether the test file at `path` is the kata's test stub as handed out (by hash)."""
    content = _read(path)
    digest = recorded().get(kata.tests_file)
    if content is None or digest is None:
        return False
    if blob_id(content) == digest:
        return True
    try:
        stub = tests_text(kata)
    except StubError:
        return False
    return blob_id(content) == blob_id(for_workspace(stub, kata.name, tests=True))


def _read(path: os.PathLike[str]) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _git(*args: str, stdin: str | None = None) -> bytes | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=registry.ROOT, input=None if stdin is None else stdin.encode(),
            capture_output=True, check=True, timeout=60,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None  # no git, not a clone, or no such object


def _git_blob(digest: str) -> str | None:
    """The content with this blob id from git's objects, if this is a clone that has it."""
    data = _git("cat-file", "blob", digest)
    if data is None:
        return None
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return content if blob_id(content) == digest else None
