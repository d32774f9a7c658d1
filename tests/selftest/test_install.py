"""Self-tests for norm-katas installed with pip, away from any clone: the wheel carries the kata
content, `norm-katas` lists and grades, and `norm-katas init DIR` makes a workspace whose files
are the ones graded, reset and never overwritten.

One virtual environment for the module, outside the clone. It borrows torch, numpy and pytest
from the Python running these tests (a .pth file), so nothing large is downloaded; only the
build backend, hatchling, comes from the package index.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from norm_katas.content import pristine, registry

pytestmark = pytest.mark.skipif(
    os.name == "nt", reason="the venv layout below is POSIX's (bin/); Windows installs alike"
)
PIP = ["--disable-pip-version-check", "install", "-q"]


def _run(command: list[str | Path], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


class Installed:
    def __init__(self, bin_dir: Path, home: Path, env: dict[str, str]) -> None:
        self.bin, self.home, self.env = bin_dir, home, env

    def __call__(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """`norm-katas ARGS` as a learner types it, by default in a folder of no clone."""
        return _run([self.bin / "norm-katas", *args], cwd or self.home, self.env)


@pytest.fixture(scope="module")
def norm_katas(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("pip-install")
    home = base / "home"
    home.mkdir()
    # Nothing of the clone or of the caller's settings may leak in: the copy must stand alone.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NORM_KATAS_", "PYTHON"))}
    env["NORM_KATAS_DATA"] = str(base / "data")
    venv = base / "venv"
    # No pip of its own (ensurepip takes seconds): this Python's pip installs into it.
    made = [sys.executable, "-m", "venv", "--without-pip", str(venv)]
    subprocess.run(made, check=True, capture_output=True)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", python, *PIP]
    site = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], base, env)
    # Every site folder of ours, those a .pth file of ours adds too (a venv built on another).
    ours = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    borrowed = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), *ours])
    Path(site.stdout.strip(), "_norm_katas_borrowed.pth").write_text("\n".join(borrowed) + "\n")
    backend = _run([*pip, "hatchling>=1.19"], base, env)
    if backend.returncode:
        last = (backend.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"the build backend, hatchling, cannot be installed here: pip says {last}")
    done = _run([*pip, "--no-deps", "--no-build-isolation", registry.ROOT], base, env)
    assert done.returncode == 0, done.stdout + done.stderr
    where = _run([python, "-c", "import norm_katas; print(norm_katas.__file__)"], home, env)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    return Installed(venv / "bin", home, env)


def test_lists_every_kata_away_from_the_clone(norm_katas: Installed) -> None:
    done = norm_katas("list")
    assert done.returncode == 0, done.stderr
    for kata in registry.load():
        assert kata.name in done.stdout and kata.title in done.stdout, kata.name
    usage = norm_katas("--help")
    assert usage.returncode == 0 and "norm-katas init" in usage.stdout
    assert "python -m norm_katas" not in usage.stdout  # named as the learner typed it


def test_grades_a_correct_file_with_the_content_it_ships(norm_katas: Installed) -> None:
    mine = norm_katas.home / "my_layernorm.py"
    mine.write_text(registry.get("layernorm").solution.read_text())
    done = norm_katas("grade", "layernorm", "--impl", mine.name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ solved" in done.stdout
    solution = norm_katas("solution", "layernorm")
    assert solution.returncode == 0 and "class LayerNorm" in solution.stdout, solution.stderr


def test_grades_tests_against_the_layers_it_ships(norm_katas: Installed) -> None:
    """The test-writing mode, installed: the catalogue's layers built on the reference (they
    import solutions/) load from the shipped content, and the verdict is the clone's."""
    weak = registry.get("batchnorm").catalogue / "tests" / "rejects_a_correct_layer.py"
    mine = norm_katas.home / "test_mine.py"
    mine.write_text(weak.read_text())
    done = norm_katas("grade", "batchnorm", "--tests", "--impl", mine.name)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "could not grade" not in done.stdout + done.stderr, done.stdout + done.stderr
    caught = _markers(weak)
    assert f"Your tests catch {len(caught)} of " in done.stdout, done.stdout


def _markers(path: Path) -> list[str]:
    import ast

    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "CATCHES":
            return [n.strip() for n in node.value.value.split(",") if n.strip()]
    return []


def test_suggests_commands_the_learner_can_type(norm_katas: Installed) -> None:
    """Installed, the report and the practice commands name norm-katas, never nox's sessions."""
    wrong = registry.ROOT / "tests" / "catalogue" / "layernorm" / "eps_outside_sqrt.py"
    done = norm_katas("grade", "layernorm", "--impl", str(wrong))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Grade again with --hints" in done.stdout and "-- --" not in done.stdout
    progress = norm_katas("progress")
    assert "norm-katas progress --history" in progress.stdout, progress.stdout
    assert "nox -s" not in progress.stdout + norm_katas("reset").stderr


def test_outside_a_workspace_says_how_to_make_one(norm_katas: Installed) -> None:
    done = norm_katas("grade", "layernorm")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "norm-katas init" in done.stderr
    # progress's next step is typed in a workspace: it says so where there is none.
    progress = norm_katas("progress")
    assert progress.returncode == 0, progress.stdout + progress.stderr
    assert "inside your workspace, and there is none here: norm-katas init" in progress.stdout


def test_init_makes_a_workspace_of_stubs_that_grades_and_keeps_your_files(
    norm_katas: Installed,
) -> None:
    workspace = norm_katas.home / "practice"
    done = norm_katas("init", workspace.name)
    assert done.returncode == 0, done.stderr
    for kata in registry.load():
        handed_out = pristine.for_workspace(kata.pristine.read_text(), kata.name)
        assert (workspace / kata.file).read_text() == handed_out, kata.file
        assert f"norm-katas grade {kata.name}\n" in handed_out  # not nox: it is not there
    assert (workspace / registry.MARKER).is_file()

    graded = norm_katas("grade", "layernorm", cwd=workspace)
    assert graded.returncode == 1, graded.stdout + graded.stderr
    assert "Not started yet?" in graded.stdout
    assert "norm-katas init" not in norm_katas("progress", cwd=workspace).stdout

    # A learner's file is theirs: init again keeps it, and says so; reset backs it up first.
    mine = workspace / "layernorm.py"
    mine.write_text("# my attempt\n")
    again = norm_katas("init", str(workspace))
    assert again.returncode == 0 and "kept" in again.stdout and "layernorm.py" in again.stdout
    assert mine.read_text() == "# my attempt\n"
    below = workspace / "notes"
    below.mkdir()
    reset = norm_katas("reset", "layernorm", cwd=below)  # found from a folder below, too
    assert reset.returncode == 0, reset.stderr
    assert "is the stub again" in reset.stdout
    kata = registry.get("layernorm")
    assert mine.read_text() == pristine.for_workspace(kata.pristine.read_text(), kata.name)


@pytest.mark.parametrize(
    "command", [["new-kata", "spectralnorm"], ["notebooks", "--write"], ["stubs", "--record"]]
)
def test_authors_commands_refuse_to_write_into_the_installed_copy(
    norm_katas: Installed, command: list[str]
) -> None:
    """The installed copy's files are pip's: an author's command says so in one line, exit 2,
    and writes nothing there (a half-made kata would then be listed and fail to grade)."""
    where = _run([norm_katas.bin / "python", "-c", SHIPPED], norm_katas.home, norm_katas.env)
    shipped = Path(where.stdout.strip())
    before = {p: p.read_bytes() for p in shipped.rglob("*") if p.is_file()}
    done = norm_katas(*command)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "for authors, in a clone" in done.stderr and "Nothing was written" in done.stderr
    after = {p: p.read_bytes() for p in shipped.rglob("*") if p.is_file()}
    assert after == before, "it wrote into the installed copy"
    assert "spectralnorm" not in norm_katas("list").stdout


SHIPPED = "from norm_katas.content import registry; print(registry.ROOT)"


def test_reset_notebook_needs_a_clone(norm_katas: Installed) -> None:
    done = norm_katas("reset", "layernorm", "--notebook")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "%kata NAME" in done.stderr, done.stderr


def test_a_notebook_away_from_the_clone_grades_with_the_installed_copy(
    norm_katas: Installed, tmp_path: Path
) -> None:
    """The generated notebook in a folder of no clone, in a kernel of the installed Python: its
    first cell finds norm-katas installed (and installs nothing), and its cells grade."""
    nbformat = pytest.importorskip("nbformat", reason="needs nbformat, nbclient and ipykernel")
    nbclient = pytest.importorskip("nbclient", reason="needs nbclient")
    pytest.importorskip("ipykernel", reason="needs ipykernel (a kernel)")
    from norm_katas.authoring import notebook_writer

    kata = registry.get("layernorm")
    prefix = norm_katas.bin.parent
    spec = _run(
        [norm_katas.bin / "python", "-m", "ipykernel", "install", "--prefix", prefix,
         "--name", "norm-katas-installed"], tmp_path, norm_katas.env,
    )  # fmt: skip
    assert spec.returncode == 0, spec.stdout + spec.stderr
    folder = tmp_path / "my-notebooks"
    folder.mkdir()
    nb = nbformat.reads(notebook_writer.text(kata), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(f"%%kata {kata.name}\n{kata.solution.read_text()}"))
    env = {**norm_katas.env, "JUPYTER_PATH": str(prefix / "share" / "jupyter")}
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)  # the kernel's environment: the installed copy's, nothing of ours
    try:
        client = nbclient.NotebookClient(
            nb, timeout=600, kernel_name="norm-katas-installed",
            resources={"metadata": {"path": str(folder)}},
        )  # fmt: skip
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    cells = {cell.get("id"): cell for cell in nb.cells}
    said = [o.get("text", "") for o in cells["setup"].outputs]
    assert not [o for o in cells["setup"].outputs if o["output_type"] == "error"], said
    assert "pip" not in "".join(said), "norm-katas is installed: nothing to install"
    html = [o.get("data", {}).get("text/html", "") for c in nb.cells for o in c.get("outputs", [])]
    verdicts = [h for h in html if "nk-verdict" in h]
    assert len(verdicts) == 2, html
    assert 'data-code="1"' in verdicts[0] and "Not started yet?" in verdicts[0]
    assert 'data-code="0"' in verdicts[1] and "solved" in verdicts[1]
