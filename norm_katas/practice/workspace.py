"""The learner's files: fresh stubs, resets that back up first, scratch copies for mocks.

The untouched stub of a kata is the tool's own copy, stubs/<file>, checked against its recorded
hash (grader/stubs.py); katas/<file> is the learner's and is never read to find it, so an
attempt, committed or not, is never taken for the stub. Nothing here deletes or overwrites
learner work without a verified backup.
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime
from pathlib import Path

from norm_katas.content import pristine, registry
from norm_katas.practice import history

# The stub's section that gives the answers away: hidden in a mock, shown after it.
PITFALLS = pristine.PITFALLS
split_pitfalls = pristine.split_pitfalls


class WorkspaceError(Exception):
    """str() is the message for the learner."""


def pristine_stub(kata: registry.Kata) -> str:
    """The untouched stub's text."""
    try:
        return pristine.text(kata)
    except pristine.StubError as e:
        raise WorkspaceError(str(e)) from None


def handed_out(kata: registry.Kata) -> str:
    """The stub as this copy hands it out to edit: in a clone the pristine stub, which says
    to grade it with nox; installed, saying to grade it with `norm-katas grade`."""
    stub = pristine_stub(kata)
    return pristine.for_workspace(stub, kata.name) if registry.INSTALLED else stub


def handed_out_tests(kata: registry.Kata) -> str:
    """The test-writing mode's stub as this copy hands it out (see handed_out)."""
    try:
        stub = pristine.tests_text(kata)
    except pristine.StubError as e:
        raise WorkspaceError(str(e)) from None
    return pristine.for_workspace(stub, kata.name, tests=True) if registry.INSTALLED else stub


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
    return _restore(kata, kata.stub, handed_out(kata))


def reset_tests(kata: registry.Kata) -> Path | None:
    """Restore the learner's tests/test_<stem>.py to the test stub; back it up first."""
    return _restore(kata, kata.tests_stub, handed_out_tests(kata))


def reset_notebook(kata: registry.Kata) -> Path | None:
    """Restore the learner's notebooks/<stem>.ipynb (a clone's) to the kata's pristine notebook;
    back the current one up first. Returns the backup."""
    text = kata.pristine_notebook.read_text(encoding="utf-8")
    return _restore(kata, kata.notebook, text)


def _restore(kata: registry.Kata, path: Path, text: str) -> Path | None:
    """Write `text` to the learner's `path`, after a verified backup of what it holds."""
    current = path.read_bytes() if path.exists() else None
    # By content (either line ending): a file that merely looks like the stub is backed up.
    if current is not None and current.replace(b"\r\n", b"\n") == text.encode("utf-8"):
        return None
    backup = None
    if current is not None:  # byte for byte, whatever the file holds
        backup = history.data_dir() / "backups" / f"{_stamp()}-{kata.name}" / path.name
        backup.parent.mkdir(parents=True, exist_ok=True)
        tmp = backup.with_name(f".{backup.name}.tmp")
        with open(tmp, "wb") as f:
            f.write(current)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, backup)
        if backup.read_bytes() != current:  # never overwrite without a good copy
            raise WorkspaceError(f"the backup {backup} could not be verified; nothing was reset")
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(path, text)
    return backup


def init(folder: Path) -> tuple[list[Path], list[Path]]:
    """Make `folder` a workspace (registry.MARKER) holding every kata's untouched stub, its
    test stub, and tests/conftest.py (CONFTEST), with which plain pytest runs them.

    A file already there is the learner's and is kept as it is. Returns (written, kept).
    """
    katas = registry.load()
    texts = {kata.file: handed_out(kata) for kata in katas}  # every stub, before any write
    texts |= {k.tests_file: handed_out_tests(k) for k in katas if k.tests_pristine.exists()}
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / registry.MARKER
    if not marker.exists():
        _write_atomically(marker, MARKER_TEXT)
    written, kept = [], []
    (folder / "tests").mkdir(exist_ok=True)
    texts["tests/conftest.py"] = CONFTEST
    for name in texts:
        path = folder / name
        if path.exists():
            kept.append(path)
        else:
            _write_atomically(path, texts[name])
            written.append(path)
    return written, kept


# tests/conftest.py beside the learner's test files (katas/tests/ in a clone, where it is
# committed as this text; written by init in a workspace): plain pytest then runs their tests
# against their own layer. The grader's test-writing mode runs pytest with --noconftest.
CONFTEST = '''\
"""`python -m pytest katas/tests/test_<kata>.py` in a clone (tests/test_<kata>.py in a
workspace of `norm-katas init`) runs your tests against your own layer, ../<kata>.py.

The grader (`nox -s kata-<name> -- --tests`, `norm-katas grade <name> --tests`) runs them
against its many layers instead and leaves this file out. Here the `kata` fixture is your own
module, so you can run your tests while you write them: a failure may be your layer's mistake
or your test's. Without a GPU, a Triton kata's kernels run in Triton's interpreter; a test of
SyncBatchNorm gets `ranks` as in the grader (norm-katas must be importable).
This file is norm-katas' own: `norm-katas init` writes it again if it is missing.
"""

import importlib.util
import os
import sys
from pathlib import Path

import pytest


def pytest_configure(config):
    if "TRITON_INTERPRET" not in os.environ:  # read by Triton when a kernel is defined
        try:
            import torch

            gpu = torch.cuda.is_available()
        except ImportError:
            gpu = False
        if not gpu:
            os.environ["TRITON_INTERPRET"] = "1"


@pytest.fixture(scope="module")
def kata(request):
    """Your layer: ../<kata>.py for tests/test_<kata>.py."""
    stem = Path(request.module.__file__).stem.removeprefix("test_")
    path = Path(__file__).resolve().parent.parent / f"{stem}.py"
    if not path.is_file():
        pytest.fail(f"{path} does not exist: these tests test the layer you write there.")
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def ranks(request, tmp_path):
    """ranks(step, world_size=2): step(rank, world_size) on each rank of a process group."""
    try:
        from norm_katas.engine.proving.ranks import Ranks
    except ImportError:
        pytest.skip("ranks comes with norm-katas: pip install norm-katas, or run in the clone")
    return Ranks(tmp_path, 60.0, Path(request.module.__file__))
'''


MARKER_TEXT = """\
# This folder is a norm-katas workspace: its <kata>.py files are yours to edit, and
# `norm-katas grade <kata>` run here or in a folder below grades them; tests/test_<kata>.py
# are your tests of each layer, graded by `norm-katas grade <kata> --tests`.
# Made by `norm-katas init`.
"""


def scratch_copy(kata: registry.Kata, graded: str = pristine.GRADED_IN_THE_MOCK) -> Path:
    """A fresh stub for a mock interview, in a new scratch folder outside katas/.

    It has the task and the contract only: the pitfalls come after the mock. Its last lines
    say how the mock grades it (`graded`: on save; in a notebook, when the cell runs).
    """
    path = history.data_dir() / "mock" / f"{_stamp()}-{kata.name}" / kata.file
    path.parent.mkdir(parents=True)
    _write_atomically(path, pristine.for_mock(pristine_stub(kata), graded))
    return path


def scratch_tests_copy(kata: registry.Kata) -> Path:
    """A fresh test stub for the mock's "how would you test it?" round, in a new scratch folder
    outside the workspace (tests/test_<stem>.py there)."""
    folder = Path(tempfile.mkdtemp(prefix=f"norm-katas-mock-tests-{kata.stem}-"))
    path = folder / "tests" / f"test_{kata.stem}.py"
    path.parent.mkdir()
    _write_atomically(path, handed_out_tests(kata))
    return path


def show_solution(kata: registry.Kata) -> str:
    """The reference solution's text; peeking is recorded in the history."""
    history.record(kata.name, "peek")
    return kata.solution.read_text(encoding="utf-8")
