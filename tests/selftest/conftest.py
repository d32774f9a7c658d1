"""Fixtures for the self-tests: a warm grader per test worker, and `grade()` through it."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from norm_katas.content import registry
from norm_katas.engine import server
from norm_katas.engine.request import Request

# Each test worker grades in processes of its own. Left to torch's default (a thread per core
# each), N workers start N x cores OpenMP threads that spin against each other: twice as slow.
# Only in a worker: the controller's environment, set at its import, would reach every worker.
if _workers := int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0")):
    _cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (_cores or 1) // _workers)))


# The self-tests grade through the learner's doors, which record attempts and back files up:
# never in the learner's own history, whatever NORM_KATAS_DATA says (a learner may set it to
# keep their history elsewhere). Every process a self-test starts (a grading, a nox session, a
# kernel) inherits this throwaway folder; tests that read the history set a folder of their own.
_THROWAWAY = tempfile.mkdtemp(prefix="norm-katas-selftest-")
os.environ["NORM_KATAS_DATA"] = _THROWAWAY
atexit.register(shutil.rmtree, _THROWAWAY, ignore_errors=True)


# The self-tests that start interpreters, kernels, nox sessions or a busy machine: seconds each,
# where a catalogue entry takes a fraction of one. Run first, so that the workers end on short
# tests and together (pytest-xdist's worksteal hands a free worker the end of a busy one's
# queue); last, one of them could keep a worker going long after the others had finished.
SLOW_FIRST = (
    "test_learner_data.py", "test_environment.py", "test_load.py", "test_new_kata.py",
    "test_notebook.py", "test_install.py", "test_docs.py", "test_isolation.py",
    "test_practice.py", "test_doors.py",
)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = {name: rank for rank, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: slow.get(item.path.name, len(slow)))  # stable: else as collected


def _device_note(config: pytest.Config) -> str | None:
    """What the grading plugin says when --device asked for a device this machine lacks."""
    from norm_katas.engine.plugin import GRADING

    grading = config.stash.get(GRADING, None)
    note = getattr(grading, "device_note", None)
    return f"--device {config.getoption('device')}: {note}" if note else None


def pytest_report_header(config: pytest.Config) -> str | None:
    return _device_note(config)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    # Said again at the end: a green run on the CPU must not pass for a run on the GPU.
    if note := _device_note(config):
        terminalreporter.write_line(note, yellow=True, bold=True)


INTERNAL = ("Traceback (most recent call last)", "INTERNALERROR")
Grade = Callable[..., tuple[dict, str, int]]


@pytest.fixture(scope="session")
def warm_grader(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[server.Client]:
    """One grading server for this worker: torch and every suite imported once, and on the
    CPU, Triton's interpreter proven once."""
    data = tmp_path_factory.mktemp("data")  # gradings never touch the user's history
    # Graded as through nox, the clone's door: the verdicts offer options as `-- --all`.
    env = {
        **os.environ, "NORM_KATAS_DATA": str(data), "NORM_KATAS_PERF_BUDGET_S": "0",
        "NORM_KATAS_INVOKED_FROM": str(registry.ROOT),
    }  # fmt: skip
    client = server.Client(env=env, device=str(pytestconfig.getoption("device")))
    if client.error:
        pytest.exit(f"the grading server could not start:\n{client.error}", returncode=3)
    yield client
    client.close()


@pytest.fixture
def grade(warm_grader: server.Client, tmp_path: Path, request: pytest.FixtureRequest) -> Grade:
    """grade(kata, impl, *options) -> (report, transcript, exit code), on --device."""
    device = str(request.config.getoption("device"))
    count = iter(range(1000))

    def run(kata: str, impl: Path | str, *extra: str) -> tuple[dict, str, int]:
        n = next(count)
        report, out = tmp_path / f"report{n}.json", tmp_path / f"out{n}.txt"
        device_args = [] if "--device" in extra else ["--device", device]
        args = ["--impl", str(impl), f"--report-json={report}", *device_args, *extra]
        code = warm_grader.grade(Request.parse(registry.get(kata), args), out)
        output = out.read_text() if out.exists() else ""
        for marker in INTERNAL:
            assert marker not in output, f"grading {impl} printed an internal error:\n{output}"
        data = json.loads(report.read_text()) if report.exists() else {}
        return data, output, code

    return run


@pytest.fixture
def warm_up_interrupted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C arrives while the grader starts (runner.warm_up: torch and the checks loading)."""
    from norm_katas.engine import runner

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "warm_up", interrupted)
