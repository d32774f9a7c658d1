"""The %kata magics in a real Jupyter kernel: a generated notebook executed headlessly
(nbclient).

One notebook, one kernel, cell after cell as a learner would run them: the stub's cell as the
notebook holds it is not started, a correct cell solves, a wrong one gets its mistake's
headline, and a cell whose code ends the grading's process is reported while the kernel lives
on.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from norm_katas.content import pristine, registry
from norm_katas.doors import cells, magics, notebook_mock, render
from norm_katas.practice import history

nbformat = pytest.importorskip(
    "nbformat", reason="the notebook self-test needs nbformat, nbclient and ipykernel (nox -s "
    "tests installs them into the grading environment)",
)  # fmt: skip
nbclient = pytest.importorskip("nbclient", reason="the notebook self-test needs nbclient")
pytest.importorskip("ipykernel", reason="the notebook self-test needs ipykernel (a kernel)")

KATA = registry.get("layernorm")
# Imported into the kernel by its first grading (runner.preload), for the gradings after it.
WARM = ("torch", "pytest", "norm_katas.engine.plugin")
WRONG = KATA.catalogue / "eps_outside_sqrt.py"
EXITS = """
import os

class LayerNorm(LayerNorm):
    def forward(self, x):
        os._exit(0)  # ends whatever process runs it: here, the grading's child only
"""


def _html(cell: dict) -> str:
    return "".join(
        out.get("data", {}).get("text/html", "") for out in cell["outputs"] if "data" in out
    )


def _plain(cell: dict) -> str:
    """What a plain-text front end shows of a cell's displays: a console, nbconvert --to
    script or markdown, an editor without HTML."""
    return "".join(
        out.get("data", {}).get("text/plain", "") for out in cell["outputs"] if "data" in out
    )


def _text(cell: dict) -> str:
    return "".join(out.get("text", "") for out in cell["outputs"] if out["output_type"] == "stream")


def _verdict(cell: dict) -> dict[str, str]:
    """The verdict's data attributes: kata, code (the grade command's exit code), headline."""
    found = re.search(r'<div class="nk-verdict"([^>]*)>', _html(cell))
    assert found, _html(cell) + _text(cell)
    return dict(re.findall(r'data-(\w+)="([^"]*)"', found.group(1)))


def test_a_generated_notebook_in_a_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """notebooks/layernorm.ipynb as a learner runs it, from its folder in this clone, then the
    cells a learner adds to it."""
    monkeypatch.setenv("NORM_KATAS_DATA", str(tmp_path / "data"))  # the kernel's history
    # What a fresh clone's notebooks/layernorm.ipynb holds (test_stubs proves it), never the
    # learner's copy there, which may hold their work.
    nb = nbformat.read(KATA.pristine_notebook, as_version=4)
    nbformat.validate(nb)
    generated = len(nb.cells)
    solution = KATA.solution.read_text(encoding="utf-8")
    code = nbformat.v4.new_code_cell
    nb.cells += [
        code(f"%kata {KATA.name}"),
        code(f"%%kata {KATA.name}\n{solution}"),
        code("import torch\nprint('defined here too:', LayerNorm(4)(torch.ones(2, 4)).shape)"),
        code(f"%%kata {KATA.name} --hints\n{WRONG.read_text(encoding='utf-8')}"),
        code(f"%%kata {KATA.name}\n{solution}\n{EXITS}"),
        code("print('the kernel is alive:', 6 * 7)"),
        code(f"%%kata {KATA.name} --nonsense\npass"),
        code(f"%%kata {KATA.name}\nimport torch\n\ndef broken(:\n    pass\n"),
        code(f"%%kata {KATA.name} -k (\n{solution}"),
        code("%kata_progress"),
        code("%kata_today --minutes 30"),
        code(f"import sys\nprint('warm:', all(m in sys.modules for m in {WARM!r}))"),
    ]
    # The kernel starts in the notebook's folder, as JupyterLab and VS Code start it: its first
    # cell finds the clone there (the child of a grading too), and installs nothing.
    where = {"metadata": {"path": str(pristine.learners_folder())}}
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources=where)
    client.execute()
    if keep := os.environ.get("NORM_KATAS_KEEP_NOTEBOOK"):  # to look at what a learner sees
        nbformat.write(nb, keep)
    by_id = {cell.get("id"): cell for cell in nb.cells[:generated]}
    loaded, stub = by_id["setup"], by_id["kata"]
    (start, right, defined, wrong, exits, alive, usage, broken, unread, progress, plan,
     warm) = nb.cells[generated:]  # fmt: skip
    assert "pip" not in _text(loaded), "the clone's copy is used, nothing installed"

    assert not [o for o in loaded.outputs if o["output_type"] == "error"], loaded.outputs
    teaching = "".join(o.get("data", {}).get("text/markdown", "") for o in start.outputs)
    assert KATA.title in teaching and "%%kata layernorm" in teaching, start.outputs

    assert _verdict(stub)["code"] == "1" and "Not started yet?" in _html(stub)
    lines = magics.cell_text(KATA).splitlines()
    first = 1 + next(i for i, line in enumerate(lines) if "raise NotImplementedError" in line)
    assert f"your cell line {first}:" in _html(stub)  # as Jupyter numbers the cell's lines

    assert _verdict(right)["code"] == "0" and "solved" in _html(right)
    assert "torch.Size([2, 4])" in _text(defined), defined.outputs  # the class is in the kernel

    expect = re.search(r'^EXPECT = "(\w+)"', WRONG.read_text(), re.MULTILINE)
    assert expect and _verdict(wrong).get("headline") == expect.group(1), _html(wrong)
    page = _html(wrong)
    assert "<details>" in page and "Interview core" in page and "Torch parity" in page
    assert "Hint (idea)" in page  # asked for with --hints
    assert page.count("<li>") >= 10 and "-- --" not in page  # options as a cell takes them

    assert _verdict(exits)["code"] == "1" and "ended abruptly" in _html(exits), _html(exits)
    assert "notebook/layernorm" not in _html(exits)  # the file graded is the learner's cell
    assert "the kernel is alive: 42" in _text(alive), alive.outputs

    assert "--nonsense" in _html(usage) and "nk-verdict" not in _html(usage)
    page = _html(broken)
    assert "could not be loaded" in page and "your cell line 4" in page, page
    assert "checks wait for it" in page and "<details><summary><span" not in page  # said once
    assert not [o for o in broken.outputs if o["output_type"] == "error"], "not run in the kernel"
    assert "layernorm" in _html(progress)
    # A selection pytest cannot read: its message, then ours, without a terminal's colour codes.
    page = _html(unread)
    assert "Wrong expression passed to" in page and "not an expression pytest can read" in page
    assert "No check matched" not in page and "\x1b[" not in page + _plain(unread), page
    # Each grading forks from the kernel: what its child needs is imported there once, not
    # afresh by every grading (seconds each).
    assert "warm: True" in _text(warm), warm.outputs

    # Every display has its text as well: the terminal report's, where HTML cannot be shown.
    shown = [o for c in nb.cells for o in c.get("outputs", []) if "data" in o]
    assert shown and all(o["data"].get("text/plain") for o in shown)
    assert not [o for o in shown if o["data"]["text/plain"].startswith("<IPython.")], shown
    assert "Not started yet?" in _plain(stub) and "your cell" in _plain(stub)
    text = _plain(wrong)
    assert "Interview core" in text and "✗" in text and "<details>" not in text, text
    assert "notebook/layernorm" not in text  # the file graded is the learner's cell
    assert "could not be loaded" in _plain(broken) and "your cell" in _plain(broken)
    assert KATA.name in _plain(progress) and "Next:" in _plain(progress)
    assert "Due in the next 14 days" in _html(progress)  # the schedule's panel
    # Solved here today, the kata is not due today: the session is of katas never tried.
    assert _plain(plan).startswith("A 30-minute session, ") and "%kata_mock" in _plain(plan)
    assert f"\n  {KATA.name} " not in _plain(plan) and "never tried" in _plain(plan), _plain(plan)
    assert KATA.title in _plain(start)  # the kata's teaching text, as its Markdown

    modes = [(e.mode, e.solved, e.attempt) for e in history.events(KATA.name)]
    # As the command line records them: the untouched stub is no attempt; a file that ends the
    # grading's process is a failed one.
    assert modes == [
        ("notebook", False, False),
        ("notebook", True, True),
        ("notebook", False, True),
        ("notebook", False, True),
        ("notebook", False, False),  # a cell that does not load is no attempt
    ]


def test_check_grades_a_class_defined_in_a_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """norm_katas.check("layernorm", LayerNorm) in a real kernel: the class, defined in a cell,
    graded with what it uses from other cells, its verdict shown as HTML and as text."""
    monkeypatch.setenv("NORM_KATAS_DATA", str(tmp_path / "data"))
    path = os.pathsep.join(filter(None, [str(registry.ROOT), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)
    solution = KATA.solution.read_text(encoding="utf-8").replace("1e-5", "EPS")
    code = nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(cells=[
        code("import norm_katas\nEPS = 1e-5\nx = 'a global the class never reads'"),
        code(solution),
        code('right = norm_katas.check("layernorm", LayerNorm)\n'
             "print(right.file.read_text())\nright"),
        code(WRONG.read_text(encoding="utf-8")),
        code('wrong = norm_katas.check("layernorm", LayerNorm, "--hints")\n'
             "print('solved:', wrong.solved, wrong.code)\nwrong"),
        code('norm_katas.check("layrnorm", LayerNorm)'),
        code('norm_katas.check("layernorm", 42)'),
    ])  # fmt: skip
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    _, _, right, _, wrong, typo, nonsense = nb.cells
    errors = [o for c in nb.cells for o in c.outputs if o["output_type"] == "error"]
    assert not errors, errors

    assert _verdict(right)["code"] == "0" and "solved" in _html(right), _html(right)
    assert "Interview core 18/18 ✓ solved" in _plain(right), _plain(right)
    graded = _text(right)  # the file graded
    assert "EPS = 1e-05" in graded and "a global" not in graded  # what it uses, nothing else

    expect = re.search(r'^EXPECT = "(\w+)"', WRONG.read_text(), re.MULTILINE)
    assert expect and _verdict(wrong).get("headline") == expect.group(1), _html(wrong)
    assert "solved: False 1" in _text(wrong) and "Hint (idea)" in _html(wrong)
    assert "%%kata" not in _html(wrong) and "cell" not in _html(wrong)  # no cell was graded
    assert "did you mean 'layernorm'?" in _plain(typo)
    assert "not int 42" in _plain(nonsense)
    modes = [(e.mode, e.solved) for e in history.events(KATA.name)]
    assert modes == [("notebook", True), ("notebook", False)]


def test_check_in_a_script(tmp_path: Path) -> None:
    """norm_katas.check in a plain Python script: the report printed, and the script is not
    run again by its grading (it calls check at its top level)."""
    script = tmp_path / "mine.py"
    solution = KATA.solution.read_text(encoding="utf-8")
    script.write_text(
        f"{solution}\n\nimport norm_katas\n\nprint('running the script')\n"
        "verdict = norm_katas.check('layernorm')\nprint('solved:', verdict.solved)\n"
    )
    env = {
        **os.environ,
        "NORM_KATAS_DATA": str(tmp_path / "data"),
        "PYTHONPATH": str(registry.ROOT),
    }
    ran = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.count("running the script") == 1, ran.stdout
    assert "Interview core 18/18 ✓ solved" in ran.stdout and "solved: True" in ran.stdout


def _children(pid: int) -> list[int]:
    listed = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(p) for p in listed.stdout.split()]


@pytest.mark.skipif(not shutil.which("pgrep"), reason="finds the grading's process with pgrep")
def test_interrupting_the_kernel_stops_the_grading_and_records_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyter_client.manager import start_new_kernel

    monkeypatch.setenv("NORM_KATAS_DATA", str(tmp_path / "data"))
    endless = "\n\ndef _forever(self, x):\n    while True:\n        pass\n\n\n"
    endless += "LayerNorm.forward = _forever\n"
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(registry.ROOT))
    kernel = manager.provisioner.process.pid  # type: ignore[union-attr]

    def run(code: str, interrupt: bool = False) -> str:
        sent = client.execute(code)
        if interrupt:  # once the grading's child runs the endless loop
            # The kernel imports torch and the suite before it forks: on a loaded machine that
            # takes a while, so the wait is as long as for any message of the kernel's.
            deadline = time.monotonic() + 300
            while not _children(kernel) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _children(kernel), "no grading started"
            manager.interrupt_kernel()
        said = []
        while True:
            message = client.get_iopub_msg(timeout=300)
            if message["parent_header"].get("msg_id") != sent:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                said.append(content["text"])
            elif kind in ("display_data", "execute_result"):
                said.append(content["data"].get("text/html", ""))
            elif kind == "error":
                said.append(f"{content['ename']}: {content['evalue']}")
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(said)

    try:
        assert run("%load_ext norm_katas") == ""
        solution = KATA.solution.read_text(encoding="utf-8")
        said = run(f"%%kata {KATA.name}\n{solution}{endless}", interrupt=True)
        assert "Grading interrupted: nothing was recorded" in said, said
        assert not _children(kernel), "the grading's process outlived the interrupt"
        assert "alive 42" in run("print('alive', 6 * 7)")
    finally:
        manager.shutdown_kernel(now=True)
    assert history.events(KATA.name) == []


class _Shell:
    """What %kata asks of IPython: set_next_input only."""

    text: str | None = None

    def set_next_input(self, text: str, replace: bool = False) -> None:
        self.text = text


def test_kata_puts_the_stub_in_a_new_cell_or_prints_it_in_colab(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shell = _Shell()
    magics.kata_magic(shell, KATA.name, None)
    assert shell.text == magics.cell_text(KATA) and shell.text.startswith("%%kata layernorm\n")
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    capsys.readouterr()
    colab = _Shell()
    magics.kata_magic(colab, KATA.name, None)
    assert colab.text is None  # Colab ignores set_next_input: the stub is printed to paste
    assert magics.cell_text(KATA) in capsys.readouterr().out


def test_a_tests_cell_grades_your_tests_of_the_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    # %kata NAME --tests: a new cell of the test stub; run as it is, it is not started yet;
    # with tests of the learner's, the cell's report is the test-writing mode's.
    shell = _Shell()
    magics.kata_magic(shell, "dyt --tests", None)
    stub = registry.get("dyt").tests_pristine.read_text(encoding="utf-8")
    assert shell.text == f"%%kata dyt --tests\n{stub}"
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(cells, "show", lambda markup, text: shown.append((markup, text)))
    magics.kata_magic(_Shell(), "dyt --tests", stub.rstrip("\n"))  # a front end's last newline
    assert "Not started yet?" in shown[-1][1] and "your cell is the stub" in shown[-1][1], shown
    weak = registry.ROOT / "tests" / "catalogue" / "dyt" / "tests" / "one_allclose.py"
    magics.kata_magic(_Shell(), "dyt --tests", weak.read_text(encoding="utf-8"))
    markup, text = shown[-1]
    assert 'data-mode="tests"' in markup and "Your tests catch" in text, text
    assert str(weak) not in text and "Stuck? Grade again with --hints for a hint." in text, text


def test_a_kata_cell_without_a_name_says_the_name_goes_on_its_first_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown: list[str] = []
    monkeypatch.setattr(cells, "show", lambda markup, text: shown.append(text))
    magics.kata_magic(_Shell(), "", "class LayerNorm: ...\n")  # %%kata, and code below it
    assert "%%kata NAME, e.g. %%kata layernorm" in shown[-1], shown
    assert "puts its stub in a new cell" not in shown[-1], shown
    magics.kata_magic(_Shell(), "", None)  # %kata alone: which stub to start
    assert "puts its stub in a new cell" in shown[-1], shown


def test_a_cuda_grading_without_a_gpu_says_how_to_get_one() -> None:
    from norm_katas.engine.report import Check, Report
    from norm_katas.engine.request import Request

    report = Report(KATA.name, KATA.title, str(KATA.solution), "cpu", [Check("a", "a", [])])
    report.finished = True
    report.checks[0].outcome = "passed"
    asked = Request.create(KATA, str(KATA.solution), device="cuda")
    assert "No GPU in this runtime" in render.verdict(asked, 0, report, "")
    assert "Change runtime type" in render.verdict(asked, 0, report, "")
    report.device = "cuda"
    assert "No GPU" not in render.verdict(asked, 0, report, "")
    on_cpu = Request.create(KATA, str(KATA.solution))
    assert "No GPU" not in render.verdict(on_cpu, 0, Report(KATA.name, "", "", "cpu"), "")


# The catalogue's no_shape_check.py, self-contained as a learner writes it: the interview core
# passes; torch parity fails (a mismatched input is accepted).
NO_SHAPE_CHECK = """

class LayerNorm(LayerNorm):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims, keepdim=True)
        var = x.var(dims, keepdim=True, unbiased=False)
        y = (x - mean) / torch.sqrt(var + self.eps)
        y = y if self.weight is None else y * self.weight
        return y if self.bias is None else y + self.bias
"""


def _all(cell: dict) -> str:
    """Everything a cell showed: HTML, Markdown and printed text."""
    data = [out.get("data", {}) for out in cell["outputs"] if "data" in out]
    shown = "".join(d.get("text/html", "") + d.get("text/markdown", "") for d in data)
    return shown + _text(cell)


def _scorecard(cell: dict) -> dict[str, str]:
    found = re.search(r'<div class="nk-scorecard"([^>]*)>', _html(cell))
    assert found, _all(cell)
    return dict(re.findall(r'data-(\w+)="([^"]*)"', found.group(1)))


def test_mock_interview_in_a_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """%kata_mock as a learner runs it: the task, gradings without options and with the time
    left, the scorecard and the debrief; then a mock whose time is up before its cell runs."""
    data = tmp_path / "data"
    monkeypatch.setenv("NORM_KATAS_DATA", str(data))
    path = os.pathsep.join(filter(None, [str(registry.ROOT), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)
    solution = KATA.solution.read_text(encoding="utf-8")
    rmsnorm = registry.get("rmsnorm")
    rms_handed_out = pristine.for_mock(pristine.text(rmsnorm), pristine.GRADED_IN_A_NOTEBOOK_MOCK)
    code = nbformat.v4.new_code_cell
    cells = [
        code("%load_ext norm_katas"),
        code("%kata_mock --stop"),
        code("%kata_mock --kata layernorm --minutes 0"),
        code("%kata_mock --kata layrnorm"),
        code(f"%kata_mock --kata {KATA.name} --minutes 5 --seed 0"),
        code("%kata_mock"),
        code(f"%kata {KATA.name}"),
        code("%%kata rmsnorm\npass"),
        code(f"%%kata {KATA.name} --hints\n{WRONG.read_text(encoding='utf-8')}"),
        code(f"%%kata {KATA.name}\n{WRONG.read_text(encoding='utf-8')}"),
        code(f"%%kata {KATA.name}\n{solution}{NO_SHAPE_CHECK}"),
        code(f"%%kata {KATA.name} --hints\n{WRONG.read_text(encoding='utf-8')}"),
        code("%kata_mock --kata rmsnorm --minutes 0.005"),
        code("import time\ntime.sleep(0.5)"),
        code(f"%%kata rmsnorm\n{rms_handed_out}"),
        code("%kata_mock --stop"),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    if keep := os.environ.get("NORM_KATAS_KEEP_NOTEBOOK"):
        nbformat.write(nb, keep)
    (_, no_mock, zero, typo, start, second, stub, other, option, wrong, core, practice,
     late_start, _, final, stop_after) = nb.cells  # fmt: skip
    errors = [o for c in nb.cells for o in c.outputs if o["output_type"] == "error"]
    assert not errors, errors

    assert "No mock interview is running" in _html(no_mock)
    assert "--minutes" in _html(zero) and "more than 0 and at most 600" in _html(zero)
    assert "did you mean &#x27;layernorm&#x27;?" in _html(typo)  # escaped, as all HTML is

    task = _all(start)
    assert f"Mock interview: {KATA.title}" in task and "5:00 on the clock" in task
    assert "No hints or options during the mock" in task and "time is up at" in task
    assert "raise NotImplementedError" not in task  # the docstring only: the code is the cell's
    assert pristine.PITFALLS not in task and "--hints" not in task
    assert f"%%kata {KATA.name}" in task

    assert "A mock interview of layernorm is running" in _html(second)
    assert "%kata_mock --stop" in _html(second)
    for refused in (stub, other):  # %kata would show the pitfalls; other katas wait
        assert "only its cell (%%kata layernorm) is graded" in _html(refused), _all(refused)
    assert "No options during a mock interview" in _html(option)
    assert "nk-verdict" not in _html(option)  # not graded, and not counted

    expect = re.search(r'^EXPECT = "(\w+)"', WRONG.read_text(), re.MULTILINE)
    assert expect and _verdict(wrong).get("headline") == expect.group(1), _html(wrong)
    page = _html(wrong)
    assert "of 5:00 left" in page and "1 grading." in page  # the time left, with each verdict
    assert "Stuck?" not in page and "--hints" not in page and "--all" not in page

    card = _scorecard(core)
    assert card == {"kata": KATA.name, "ended": "the interview core passes", "solved": "1"}
    page = _html(core)
    assert "solved ✓" in page and re.search(r"Gradings</th><td[^>]*>2<", page), page
    assert "Torch parity, the stretch goal, is at" in page and "grades as practice" in page
    assert pristine.PITFALLS in page  # the debrief: the pitfalls, then each question, folded
    assert "``" not in page and "<code>unbiased=True</code>" in page  # the stub's RST code
    text = _plain(core)
    assert "<code>" not in text and "``" not in text and "`unbiased=True`" in text, text
    assert f"Scorecard: {KATA.title}" in text and "Result" in text and "Q1. " in text
    from norm_katas.practice import mock

    questions = mock.follow_ups(KATA)
    assert questions and page.count("<details class='nk-followup'>") == len(questions)
    assert "Answer each aloud, then expand it" in page

    # After the mock, a cell of its kata grades as practice again, with the options it takes.
    assert "Hint (idea)" in _html(practice) and "nk-mock-clock" not in _html(practice)

    assert "0:00 on the clock" in _all(late_start)
    page = _html(final)
    assert "Time is up: that was the final grading." in page and "Not started yet?" in page
    assert _scorecard(final) == {"kata": "rmsnorm", "ended": "time is up", "solved": "0"}
    assert "No mock interview is running" in _html(stop_after)  # the mock ended with it

    events = history.events()
    mocks = [e for e in events if e.mode == "mock"]
    # layernorm's two gradings, one mock; rmsnorm's final grading (its stub: no attempt).
    assert [(e.kata, e.solved, e.attempt) for e in mocks] == [
        ("layernorm", False, True),
        ("layernorm", True, True),
        ("rmsnorm", False, False),
    ]
    assert len({e.mock_id for e in mocks[:2]}) == 1 and mocks[2].mock_id != mocks[0].mock_id
    assert mocks[0].budget == 300 and mocks[1].seconds is not None
    assert 0 < mocks[1].seconds < 300 and mocks[0].seconds <= mocks[1].seconds
    assert mocks[2].seconds >= mocks[2].budget  # graded after its time was up
    assert [e.mode for e in events if e.mode != "mock"] == ["notebook"]  # the practice cell


def test_kata_mock_puts_its_cell_in_a_new_cell_or_prints_it_in_colab(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NORM_KATAS_DATA", str(tmp_path))
    monkeypatch.setattr(cells, "show", lambda markup, text: print(markup))
    handed_out = pristine.for_mock(pristine.text(KATA), pristine.GRADED_IN_A_NOTEBOOK_MOCK)
    for colab in (False, True):
        if colab:
            monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
        shell = _Shell()
        notebook_mock.mock_magic(shell, f"--kata {KATA.name} --minutes 5")
        printed = capsys.readouterr().out
        cell = f"%%kata {KATA.name}\n{handed_out}"
        assert (shell.text, cell in printed) == ((None, True) if colab else (cell, False))
        notebook_mock.mock_magic(shell, "--stop")
        assert 'data-ended="you stopped"' in capsys.readouterr().out


def test_a_notebook_mock_says_it_is_in_the_history_only_when_it_is() -> None:
    """A %kata_mock stopped before any attempt was recorded must not claim a place in history."""
    from types import SimpleNamespace

    from norm_katas.doors.render import _after

    def running(recorded: bool) -> SimpleNamespace:
        kata = SimpleNamespace(name="dropout")
        return SimpleNamespace(
            kata=kata, solved_at=None, parity_at=None, last=None, in_history=lambda: recorded
        )

    assert "left nothing in your history" in _after(running(False))  # type: ignore[arg-type]
    assert "This mock is in your history" in _after(running(True))  # type: ignore[arg-type]
