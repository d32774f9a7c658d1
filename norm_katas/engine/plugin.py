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

The jobs, one place each: CheckTimer (time limits), Learners (importing the learner's file),
checklist() and record_outcome() (the checks and what became of each), measure_perf (--perf),
JsonReport (--report-json); Grading holds a run's state and its hooks call those.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
import torch

from norm_katas.checks.suite import declared
from norm_katas.content import pristine, registry
from norm_katas.engine import options, shards
from norm_katas.engine.report import (
    CORE,
    INFO,
    PARITY,
    TIMEOUT,
    Check,
    Outcome,
    Printer,
    Report,
    Tier,
    choose_hints,
    describe,
    exit_code,
    explain,
    raised_at,
    unstarted_json,
)
from norm_katas.engine.request import Request, UsageError, resolve_device
from norm_katas.runtime import limits, torch_compat
from norm_katas.runtime.loader import (
    LearnerModule,
    LoadError,
    NotThisCheck,
    display_path,
    load_file,
)
from norm_katas.runtime.outcomes import Belongs, CannotGrade, RaisedInterrupt, raised_by_code

GRADING = pytest.StashKey["Grading"]()
MAX_TIMEOUTS = 2  # after this many checks hang, the learner's code loops: stop waiting
# A line of torch's C++ log (c10's LOG(WARNING), glog's format) on the process's stderr:
# "[W1125 16:34:13.431000 7197 ProcessGroupGloo.cpp:123] ...".
_TORCH_CPP_LOG = re.compile(
    r"^\[?[DIWEF]\d{4} \d\d:\d\d:\d\d\.\d+(?: +\d+)? [^\s\]]+\.(?:cpp|cc|cu|h|hpp):\d+\] "
)


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


def _from_options(config: pytest.Config, kata: registry.Kata) -> Request:
    """pytest run directly: the plugin's options make the kata's request (base: where the
    user ran it), through the resolvers every door uses."""
    return Request.create(
        kata, config.getoption("impl"), device=config.getoption("device"),
        report_json=config.getoption("report_json"), strict=config.getoption("strict_parity"),
        hints=config.getoption("hints"), expand=config.getoption("expand"),
        perf=config.getoption("perf"), checklist=config.getoption("checklist"),
    )  # fmt: skip


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
            "tests/test_<kata>.py, for a kata in katas/katas.toml",
            pytrace=False,
        )
    return request.config.stash[GRADING].load(entry)


def kata_of(module: Any) -> registry.Kata | None:
    """The kata whose suite `module` is, from its file name: tests/test_<kata>.py."""
    path = getattr(module, "__file__", None)
    return registry.for_suite(path) if path else None


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


def target(device: str) -> tuple[torch.device, str | None]:
    """The torch device a resolved --device runs the checks on, and a note when it differs
    from what was asked (no CUDA here)."""
    if device.startswith("cuda"):
        if torch.cuda.is_available():
            return torch.device(device), None
        return torch.device("cpu"), (
            "No CUDA device here: values are checked on the CPU, and device handling on "
            "simulated CUDA (FakeTensorMode)."
        )
    if device == "mps" and not torch.backends.mps.is_available():
        raise pytest.UsageError("--device mps: no MPS device is available on this machine.")
    return torch.device(device), None


class CheckTimer:
    """Each check's time limit. pytest-timeout reads --timeout and the `timeout` marker and asks
    for a timer per check; in a grading, the timer is a limits.Budget that counts the check's
    setup, call and teardown (not pytest's report of a failure, which reads source files, nor
    the checklist). Elsewhere (the self-tests) pytest-timeout's own timer runs."""

    def __init__(self) -> None:
        self.grading = False  # set once the kata's checklist is built
        self.budget: limits.Budget | None = None  # the running check's time limit
        self._in_phase = False  # inside a check's setup, call or teardown

    @pytest.hookimpl(optionalhook=True)
    def pytest_timeout_set_timer(self, item: pytest.Item, settings: Any) -> bool | None:
        if not self.grading:
            return None
        self.budget = limits.Budget(float(settings.timeout), item.name, settings.method)
        if self._in_phase:  # timeout_func_only: set from inside the call
            self.budget.start()
        return True

    @pytest.hookimpl(optionalhook=True)
    def pytest_timeout_cancel_timer(self, item: pytest.Item) -> bool | None:
        if self.budget is None:
            return None
        self.budget.close()
        self.budget = None
        return True

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        yield from self._counted()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        yield from self._counted()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Iterator[None]:
        yield from self._counted()

    def _counted(self) -> Iterator[None]:
        self._in_phase = True
        if self.budget is not None:
            self.budget.start()
        try:
            yield
        finally:
            self._in_phase = False
            if self.budget is not None:
                self.budget.stop()


class Learners:
    """The learner's files, each imported once per run: a file that does not import fails
    every check that needs it, with one message."""

    def __init__(self) -> None:
        self.loaded: dict[Path, LearnerModule | LoadError] = {}

    def load(self, kata: registry.Kata, path: Path) -> LearnerModule | LoadError:
        if path not in self.loaded:
            try:
                module = load_file(path, f"norm_katas_learner_{kata.stem}")
                self.loaded[path] = LearnerModule(module, path)
            except limits.TimedOut as e:  # the check's time limit ran out during the import
                advice = "loop forever" if e.busy else "sleep, or wait for input or a lock"
                self.loaded[path] = LoadError(
                    f"importing {display_path(path)} did not finish in time: {e.detail}\n"
                    f"Does top-level code {advice}?"
                )
            except LoadError as e:
                self.loaded[path] = e
        return self.loaded[path]


# A device check's title begins so; graded on the CPU it ran on simulated CUDA (fake_cuda).
ON_CUDA, SIMULATED_CUDA = "runs on CUDA", "runs on (simulated) CUDA"


def checklist(
    request: Request, device: torch.device, items: list[pytest.Item], left_out: list[pytest.Item]
) -> tuple[Report, dict[str, Check]]:
    """The kata's report with its checks, none run yet, and each by its node id. The interview
    core runs (and is listed) first, then torch parity, each in suite order; information-only
    reports last, apart from the checks. `items` are sorted so."""
    kata = request.kata
    report = Report(kata.name, kata.title, display_path(request.file), str(device))
    for item in left_out:  # by -k or -m
        if (tier := _tier(item)) != INFO:  # leaving out a report decides nothing
            report.deselected[tier] += 1
    tiers = {item.nodeid: _tier(item) for item in items}
    items.sort(key=lambda item: (CORE, PARITY, INFO).index(tiers[item.nodeid]))
    checks = {}
    for item in items:
        description, hints = describe(getattr(item, "function", None).__doc__, item.name)
        if device.type == "cpu" and description.startswith(ON_CUDA):
            # Graded on the CPU, the device checks run on simulated CUDA: say so, not "CUDA".
            description = SIMULATED_CUDA + description.removeprefix(ON_CUDA)
        if hasattr(item, "callspec"):
            description += f" [{item.callspec.id}]"
        broad = item.get_closest_marker("broad") is not None
        check = Check(item.name, description, hints, tier=tiers[item.nodeid], broad=broad)
        checks[item.nodeid] = check
        report.checks.append(check)
    return report, checks


def _unread_repr(excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
    """pytest's record of a failed check, where nothing prints it: the exception, no traceback."""
    return excinfo.exconly()


def grader_error(call: pytest.CallInfo[Any]) -> str | None:
    """The grader's own failure in a check (it cannot grade here, or it is too slow): never
    the learner's."""
    if call.excinfo is not None and call.excinfo.errisinstance((CannotGrade, limits.GraderTooSlow)):
        return str(call.excinfo.value)
    return None


def _interrupt_raised_fails() -> Generator[None, None, None]:
    """A phase of a check, where a KeyboardInterrupt raised by code fails the check as any
    exception would (outcomes.RaisedInterrupt), and one from a signal stops the run."""
    try:
        return (yield)
    except KeyboardInterrupt as e:
        if not raised_by_code(e):
            raise
        raise RaisedInterrupt(*e.args).with_traceback(e.__traceback__) from None


def record_outcome(
    check: Check,
    call: pytest.CallInfo[Any],
    result: pytest.TestReport,
    learner: Path,
    pitfalls: str = "",
) -> None:
    """What a phase of the check (setup, call, teardown) says about it: failed (with the kind,
    the message and the hints that fit it, `pitfalls` being the stub's section), skipped (with
    why), or passed."""
    if result.failed and call.excinfo is not None:
        check.outcome = Outcome.FAILED
        check.kind, check.message = explain(call.excinfo, learner)
        check.raised = raised_at(call.excinfo, learner)
        check.hints = choose_hints(
            check.hints, check.kind, check.message, pitfalls,
            missing=call.excinfo.errisinstance(NotThisCheck),
        )  # fmt: skip
        if call.excinfo.errisinstance(Belongs):
            check.belongs = call.excinfo.value.check
    elif result.skipped:
        check.outcome = Outcome.SKIPPED
        longrepr = result.longrepr
        check.message = longrepr[2].removeprefix("Skipped: ") if isinstance(longrepr, tuple) else ""
    elif result.when == "call" and result.passed:
        check.outcome = Outcome.PASSED


def measure_perf(
    session: pytest.Session, report: Report, load: Any, device: torch.device
) -> dict[str, Any] | None:
    """--perf: the suite's perf_case, timed against torch's built-in (never graded)."""
    from norm_katas.engine import perf

    suite = next((item.module for item in session.items if hasattr(item, "module")), None)
    make_case = declared(suite).perf_case
    if make_case is None or report.load_error:
        return None
    try:
        kata = load(kata_of(suite))
        torch.manual_seed(0)
        return perf.report(make_case(kata, device), device)
    except BaseException as e:  # the learner's constructor, say: report, never crash
        result = {"given": report.title, "device": str(device)}
        result["error"] = f"your code raised {type(e).__name__}: {e}".strip()
        return result


class JsonReport:
    """--report-json: the verdict as JSON, written again as the grading goes; the runner reads
    it (and its modification time, as a sign of progress)."""

    def __init__(self, path: Path | None, hints: int) -> None:
        self.path = path
        self.hints = hints
        self.writes = True  # False in a worker sharing the checks: it only touches the file
        self._dump: IO[str] | None = None
        if path is not None:
            # The runner asks for this process's stack when a grading stops making progress.
            self._dump = limits.register_dump(path.with_suffix(".stack"))

    def write(self, report: Report | None, grader_errors: list[str]) -> None:
        if self.path is None or not self.writes:
            return
        if report is not None:
            data = report.to_json(hints=self.hints)
        else:  # nothing to grade with: only the grader's own errors, if any
            data = unstarted_json(grader_errors)
        self.path.write_text(json.dumps(data, indent=2))

    def touch(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.utime(self.path)


class Grading:
    """A run's state: the request, the checklist being built and how its checks end."""

    def __init__(self, config: pytest.Config, handed: Request | None) -> None:
        self.config = config
        self.handed = handed
        if handed is not None:
            asked = handed.device
        else:
            try:
                asked = resolve_device(config.getoption("device"))
            except UsageError as e:
                raise pytest.UsageError(str(e)) from None
        self.target, self.device_note = target(asked)
        self.request: Request | None = None  # the graded kata's, once its checks are collected
        self.learners = Learners()
        self.timer = CheckTimer()
        self.report: Report | None = None
        self.checks: dict[str, Check] = {}
        self.timeouts = 0
        self.busy_timeouts = 0  # of them, those that used their CPU time: loops, not waits
        self.session: pytest.Session | None = None
        self.printer: Printer | None = None
        self.grader_errors: list[str] = []  # the grader's own failures, never the learner's
        self.pitfalls = ""  # the stub's pitfalls section: hints for a crash
        self._deselected: list[pytest.Item] = []  # by -k or -m
        # Where the checks are shared with a worker (engine.shards): what prints them in order.
        self.in_order: shards.controller.Controller | None = None
        report_json = handed.report_json if handed else config.getoption("report_json")
        hints = handed.hints if handed else config.getoption("hints")
        self.json = JsonReport(None if report_json is None else Path(report_json), hints)
        self.muted = bool(handed.checklist if handed else config.getoption("checklist"))
        if self.muted:
            reporter = config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                # pytest-timeout writes through the terminal reporter, so mute it, not remove it.
                reporter._tw = _null_writer()

    def request_for(self, kata: registry.Kata) -> Request:
        """The request for `kata`: the handed-in one, or one from the options."""
        if self.handed is not None:
            return self.handed
        if self.request is not None and self.request.kata == kata:
            return self.request
        try:
            return _from_options(self.config, kata)
        except UsageError as e:
            raise pytest.UsageError(str(e)) from None

    def load(self, kata: registry.Kata) -> LearnerModule:
        request = self.request_for(kata)
        result = self.learners.load(request.kata, request.file)
        if isinstance(result, LoadError):
            if self.report is not None:
                self.report.load_error = str(result)
            pytest.fail(str(result), pytrace=False)
        return result

    # -- the checklist --------------------------------------------------------------------
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:  # a suite that does not import: the grader's fault, not the learner's
            self.grader_errors.append(f"{report.nodeid}: {report.longreprtext.strip()}")

    def pytest_internalerror(self, excrepr: Any) -> None:
        self.grader_errors.append(str(excrepr))
        self.json.write(self.report, self.grader_errors)

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        """-k picks a kata's checks by the line the checklist shows (the docstring's first) as
        well as by name: `-k cuda` finds "runs on CUDA", whatever the function is called."""
        function = getattr(item, "function", None)
        if function is not None and kata_of(getattr(item, "module", None)) is not None:
            item.extra_keyword_matches.add(describe(function.__doc__, item.name)[0])

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self._deselected.extend(items)

    # Last, so that -k and -m have deselected what they leave out: the checklist is the rest.
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        suites = {item.module for item in items if hasattr(item, "module")}
        katas = {kata_of(module) for module in suites}
        katas.discard(None)
        if len(katas) != 1:
            return  # not a single kata's suite (the self-tests): plain pytest output
        self.request = request = self.request_for(katas.pop())
        self.report, self.checks = checklist(request, self.target, items, self._deselected)
        if request.first:  # run those first; the report keeps the checklist's order
            rank = {name: i for i, name in enumerate(request.first)}
            items.sort(key=lambda item: rank.get(item.name, len(rank)))
        self.report.grader_errors = self.grader_errors
        self.pitfalls = _pitfalls(request.kata)
        if self.muted:
            # The checklist says each failure in its own words (report.explain). pytest's
            # traceback, which parses the suite's source again for each failing check (most of
            # a stub's grading), would be printed nowhere.
            for item in items:
                item.repr_failure = _unread_repr  # type: ignore[method-assign]
        self.timer.grading = True
        self.json.write(self.report, self.grader_errors)  # unfinished: tells the runner it began
        if not request.checklist:
            return
        self.printer = Printer(
            hints=request.hints,
            expand=request.expand,
            strict=request.strict,
            door=request.door,
            mock=request.mock,
        )
        # A suite may add what --device means for it (SyncBatchNorm: ranks on gloo, not nccl),
        # and what grading without the asked device means for it (Triton: the kernel runs in
        # the interpreter, not on simulated CUDA).
        suite = declared(getattr(items[0], "module", None) if items else None)
        missing = self.device_note and suite.no_device_note
        own = suite.device_note(self.target) if suite.device_note else None
        notes = [missing or self.device_note, own]
        self.printer.header(self.report, "\n".join(n for n in notes if n) or None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]):
        outcome = yield
        check = self.checks.get(item.nodeid)
        if check is None or self.request is None:
            return
        result = outcome.get_result()
        check.seconds = round(check.seconds + result.duration, 4)
        # What the learner's code printed: each phase's report holds the phases before it too.
        if printed := learners_output(result.capstdout + result.capstderr).strip("\n"):
            check.output = printed
        if check.outcome in (Outcome.FAILED, Outcome.SKIPPED):
            return
        if (message := grader_error(call)) is not None:
            if message not in self.grader_errors:  # a module fixture fails every check alike
                self.grader_errors.append(message)
            if self.session is not None:
                self.session.shouldstop = "the grader cannot grade here"
            return
        record_outcome(check, call, result, self.request.file, self.pitfalls)
        if check.belongs and check.belongs != check.function:
            # Another check's mistake, met here (torch work in a values check): its hints fit.
            owner = getattr(getattr(item, "module", None), check.belongs, None)
            if owner is not None:
                _, hints = describe(owner.__doc__, check.belongs)
                check.hints = choose_hints(hints, check.kind, check.message, self.pitfalls)
        if check.outcome == Outcome.FAILED and check.kind == TIMEOUT:
            error = call.excinfo.value if call.excinfo else None
            self._count_timeout(getattr(error, "busy", True))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from _interrupt_raised_fails())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from _interrupt_raised_fails())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from _interrupt_raised_fails())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        if item.nodeid not in self.checks:  # not a check of the graded kata
            yield
            return
        with torch_log_muted(), uninitialized_memory_filled():
            yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        if not shards.asked(self, session):
            return None  # pytest's own loop
        return shards.run(session, self)

    def become_worker(self) -> None:
        """In a worker forked to share the checks (engine.shards): print nothing, write no
        report; the process that forked it does both."""
        self.printer = None
        self.json.writes = False

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        if self.in_order is not None:
            return  # it shows the check that the checklist waits for
        check = self.checks.get(nodeid)
        if self.printer and check is not None and self.report and not self.grader_errors:
            self.printer.running(check, self.report)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        check = self.checks.get(nodeid)
        if self.in_order is not None and check is not None:
            self.in_order.ended_check(nodeid)
        elif self.printer and check is not None and self.report and not self.grader_errors:
            self.printer.check(check, self.report)
        elif self.printer:
            self.printer.erase()  # the runner says why the grading stopped
        self.json.touch()  # a sign of progress for the runner, which stops one that makes none

    def _count_timeout(self, busy: bool) -> None:
        """A check timed out: looping on the CPU (busy) or waiting idle. After a few, stop,
        saying which the learner's code seems to do, as each check's own message did."""
        self.timeouts += 1
        self.busy_timeouts += busy
        if self.timeouts >= MAX_TIMEOUTS and self.session is not None:
            self.session.shouldstop = "checks kept timing out"
            if self.busy_timeouts == self.timeouts:
                seems = "to loop forever"
            elif self.busy_timeouts == 0:
                seems = "to wait forever (a sleep, or a wait for input or a lock)"
            else:
                seems = "never to finish"
            if self.report is not None:
                self.report.stopped = (
                    f"{self.timeouts} checks timed out, so your code seems {seems}; "
                    "the remaining checks were not run."
                )

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.report is None or self.request is None:
            self.json.write(None, self.grader_errors)
            return
        self.report.finished = True
        # Finished before the verdict shows: watch mode never cancels a grading whose verdict
        # the learner has seen (runner._wait lets a finished report's child end).
        self.json.write(self.report, self.grader_errors)
        if self.printer and not self.grader_errors:  # the runner says why nothing was graded
            self.printer.verdict(self.report)
        if self.request.perf:
            self.report.perf = measure_perf(session, self.report, self.load, self.target)
            if self.printer and self.report.perf is not None:
                from norm_katas.engine import perf

                self.printer.write("\n" + perf.format_report(self.report.perf))
            self.json.write(self.report, self.grader_errors)
        # Interrupted (2) too: checks that kept timing out stop the run, the learner's loop.
        if not self.grader_errors and session.exitstatus in (0, 1, 2):
            session.exitstatus = exit_code(self.report, self.request.strict)


@contextlib.contextmanager
def torch_log_muted() -> Iterator[None]:
    """torch's own loggers say nothing during a check: their records (fake tensors' "failed
    while attempting to run meta", with its traceback, when simulated CUDA cannot run an op)
    would land in the check's captured stderr and pass for the learner's prints. The
    learner's own loggers are left alone."""
    loggers = [
        logger
        for name, logger in list(logging.Logger.manager.loggerDict.items())
        if isinstance(logger, logging.Logger) and (name == "torch" or name.startswith("torch."))
    ]
    before = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = True
    try:
        yield
    finally:
        for logger, disabled in zip(loggers, before, strict=True):
            logger.disabled = disabled


@contextlib.contextmanager
def uninitialized_memory_filled() -> Iterator[None]:
    """torch.empty and its kin return NaN (integers: their largest value) during a check, as
    torch does under use_deterministic_algorithms: memory the code allocates and never writes
    reads the same on every run. Left as it was, it held whatever the allocator's last user
    left there, so that a buffer made with torch.empty instead of torch.zeros failed one run
    and passed the next, where the garbage happened to be zeros. warn_only: torch's choice of
    algorithms is otherwise the learner's, and an op with no deterministic version only warns."""
    import torch.utils.deterministic

    before = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.utils.deterministic.fill_uninitialized_memory,
    )
    if before[0] and not before[1]:  # the learner's own strict setting stays
        yield
        return
    torch_compat.set_deterministic(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        yield
    finally:
        torch_compat.set_deterministic(before[0], warn_only=before[1])
        torch.utils.deterministic.fill_uninitialized_memory = before[2]


def learners_output(captured: str) -> str:
    """A check's captured output without torch's C++ log lines, which its C++ code writes to
    the process's stderr itself: torch's words, not the learner's."""
    if "] " not in captured:
        return captured
    return "".join(
        line for line in captured.splitlines(keepends=True) if not _TORCH_CPP_LOG.match(line)
    )


def _pitfalls(kata: registry.Kata) -> str:
    """The kata's stub's pitfalls section, or nothing where the stub cannot be read."""
    try:
        return pristine.split_pitfalls(pristine.text(kata))[1]
    except (pristine.StubError, OSError, UnicodeDecodeError):
        return ""


def _tier(item: pytest.Item) -> Tier:
    if item.get_closest_marker("info") is not None:
        return INFO
    return PARITY if item.get_closest_marker("parity") is not None else CORE


def _null_writer() -> Any:
    from _pytest.terminal import TerminalWriter

    return TerminalWriter(open(os.devnull, "w"))
