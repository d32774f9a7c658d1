"""pytest plugin: loads the learner's file for the kata suites and reports a checklist.

What to grade comes as a engine.request.Request: handed in by the grading's child
(runner.child_main, as a HandedIn plugin object), or, when pytest runs a suite directly
(`python -m pytest tests/test_layernorm.py --impl solutions`), made from the plugin's options
(defined in engine.options) by the same resolvers: --impl (which file to grade), --device (cpu,
cuda, mps), --checklist (replace pytest's output with the learner-facing checklist),
--report-json (write the verdict), --hints, --all (every failure, not only the headline),
--perf, --strict-parity. A handed-in request is also set as those options' values, for a suite
that reads one (config.getoption("device")).
Fixtures: `kata` (the learner's module) and `device`. Every check runs with torch seeded.
Markers: `parity` (a torch-parity check, graded after the interview core) and `broad` (a
catch-all check that many mistakes fail, so never the headline while a specific one fails).
Time limits: pytest-timeout's --timeout and `timeout` marker give each check its budget, which
runtime.limits measures as CPU time of this process's main thread (see there), not wall-clock.

The jobs, one module each: timer (CheckTimer: time limits), learners (importing the
learner's file), checklist (the checks and what became of each), perf (--perf), json_report
(--report-json), conditions (what every check runs under, and which of its output is the
learner's); grading (Grading: a run's state, whose hooks call those). This module is what
pytest loads: the options, markers and fixtures.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
import torch

from norm_katas.engine import options
from norm_katas.engine.grading import Grading
from norm_katas.engine.learners import kata_of
from norm_katas.engine.request import Request
from norm_katas.runtime.loader import LearnerModule

GRADING = pytest.StashKey["Grading"]()


class HandedIn:
    """A grading's request, handed to pytest.main as a plugin object (runner.child_main)."""

    def __init__(self, request: Request) -> None:
        self.request = request


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_to_pytest(parser.getgroup("norm-katas"))


@pytest.hookimpl(trylast=True)  # after the terminal reporter exists, so it can be muted
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "parity: a torch-parity check (stretch), graded after the interview core"
    )
    config.addinivalue_line(
        "markers", "broad: a catch-all check many mistakes fail; never the headline if another is"
    )
    config.addinivalue_line(
        "markers", "info: a report for the learner (it skips with its text): never graded"
    )
    handed = next(
        (p.request for p in config.pluginmanager.get_plugins() if isinstance(p, HandedIn)), None
    )
    if handed is not None:
        _set_options(config, handed)
    config.stash[GRADING] = grading = Grading(config, handed)
    config.pluginmanager.register(grading, "norm-katas-grading")
    config.pluginmanager.register(grading.timer, "norm-katas-timer")


def _set_options(config: pytest.Config, request: Request) -> None:
    """The plugin's options say what the handed-in request says, for a suite that reads one."""
    values = {
        "impl": str(request.file), "device": request.device, "hints": request.hints,
        "expand": request.expand, "perf": request.perf, "strict_parity": request.strict,
        "checklist": request.checklist,
        "report_json": None if request.report_json is None else str(request.report_json),
    }  # fmt: skip
    for name, value in values.items():
        setattr(config.option, name, value)


@pytest.fixture(scope="session")
def device(request: pytest.FixtureRequest) -> torch.device:
    """The device the checks run on (--device; the CPU when the asked one is missing)."""
    return request.config.stash[GRADING].target


@pytest.fixture(scope="module")
def kata(request: pytest.FixtureRequest) -> LearnerModule:
    """The learner's module for the suite's kata, loaded from --impl (default katas/)."""
    entry = kata_of(request.module)
    if entry is None:
        pytest.fail(
            f"{request.module.__file__} is no kata's suite: the `kata` fixture serves "
            "tests/test_<kata>.py, for a kata in katas.toml",
            pytrace=False,
        )
    return request.config.stash[GRADING].load(entry)


@pytest.fixture(scope="module", autouse=True)
def _stop_the_ranks() -> Iterator[None]:
    """Ranks a suite started (checks.distributed) live as long as the suite: its distributed
    checks reuse them; they stop after its last check."""
    yield
    if (world := sys.modules.get("norm_katas.checks.distributed.world")) is not None:
        world.close_all()


@pytest.fixture(autouse=True)
def _seeded(device: torch.device) -> None:
    if device.type == "cpu":
        # torch.manual_seed would also queue a seeding of every not yet initialised CUDA, MPS
        # and XPU generator, each with a formatted copy of the deep stack: milliseconds a check.
        torch.default_generator.manual_seed(0)
    else:
        torch.manual_seed(0)
