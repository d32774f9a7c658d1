"""pytest plugin: loads the learner's file for the kata suites and reports a checklist.

Options (defined in grader.options): --impl (which file to grade), --device (cpu, cuda, mps),
--checklist (replace pytest's output with the learner-facing checklist), --report-json (write
the verdict), --hints, --all (every failure, not only the headline), --perf, --strict-parity.
Fixtures: `kata` (the learner's module) and `device`. Every check runs with torch seeded.
Markers: `parity` (a torch-parity check, graded after the interview core) and `broad` (a
catch-all check that many mistakes fail, so never the headline while a specific one fails).
Time limits: pytest-timeout's --timeout and `timeout` marker give each check its budget, which
grader.limits measures as CPU time of this process's main thread (see there), not wall-clock.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
import torch

from norm_katas.grader import limits, options, registry
from norm_katas.grader.loader import LearnerModule, LoadError, display_path, load_file
from norm_katas.grader.outcomes import Belongs, CannotGrade
from norm_katas.grader.report import (
    CORE,
    INFO,
    PARITY,
    TIMEOUT,
    Check,
    Printer,
    Report,
    describe,
    explain,
)

GRADING = pytest.StashKey["Grading"]()
MAX_TIMEOUTS = 2  # after this many checks hang, the learner's code loops: stop waiting


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
    config.stash[GRADING] = grading = Grading(config)
    config.pluginmanager.register(grading, "norm-katas-grading")


@pytest.fixture(scope="session")
def device(request: pytest.FixtureRequest) -> torch.device:
    """The device the checks run on (--device; the CPU when the asked one is missing)."""
    return request.config.stash[GRADING].target


@pytest.fixture(scope="module")
def kata(request: pytest.FixtureRequest) -> LearnerModule:
    """The learner's module for the suite's KATA, loaded from --impl (default katas/)."""
    return request.config.stash[GRADING].load(request.module.KATA)


@pytest.fixture(autouse=True)
def _seeded(device: torch.device) -> None:
    if device.type == "cpu":
        # torch.manual_seed would also queue a seeding of every not yet initialised CUDA, MPS
        # and XPU generator, each with a formatted copy of the deep stack: milliseconds a check.
        torch.default_generator.manual_seed(0)
    else:
        torch.manual_seed(0)


def _device(config: pytest.Config) -> tuple[torch.device, str | None]:
    """The device value checks run on, and a note when it differs from what was asked."""
    asked = str(config.getoption("device")).lower()
    if asked == "cpu":
        return torch.device("cpu"), None
    if asked.startswith("cuda"):
        if torch.cuda.is_available():
            return torch.device(asked), None
        return torch.device("cpu"), (
            "No CUDA device here: values are checked on the CPU, and device handling on "
            "simulated CUDA (FakeTensorMode)."
        )
    if asked == "mps":
        if torch.backends.mps.is_available():
            return torch.device("mps"), None
        raise pytest.UsageError("--device mps: no MPS device is available on this machine.")
    raise pytest.UsageError(f"--device {asked}: expected cpu, cuda or mps.")


class Grading:
    """Per-run state: the loaded learner files, and the checklist being built."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.target, self.device_note = _device(config)
        self.base = Path(os.environ.get("NORM_KATAS_INVOKED_FROM", Path.cwd()))
        self.loaded: dict[Path, LearnerModule | LoadError] = {}
        self.report: Report | None = None
        self.checks: dict[str, Check] = {}
        self.learner: Path | None = None
        self.timeouts = 0
        self.session: pytest.Session | None = None
        self.printer: Printer | None = None
        self.grader_errors: list[str] = []  # the grader's own failures, never the learner's
        self.perf: dict | None = None  # --perf's measurements
        self._deselected: list[pytest.Item] = []  # by -k or -m
        self.budget: limits.Budget | None = None  # the running check's time limit
        self._in_phase = False  # inside a check's setup, call or teardown
        self._dump: IO[str] | None = None
        if report := config.getoption("report_json"):
            # The runner asks for this process's stack when a grading stops making progress.
            self._dump = limits.register_dump(Path(report).with_suffix(".stack"))
        if config.getoption("checklist"):
            self.printer = Printer(
                hints=config.getoption("hints"),
                expand=config.getoption("expand"),
                strict=config.getoption("strict_parity"),
            )
            reporter = config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                # pytest-timeout writes through the terminal reporter, so mute it, not remove it.
                reporter._tw = _null_writer()

    def load(self, name: str) -> LearnerModule:
        entry = registry.get(name)
        path = registry.resolve_impl(entry, self.config.getoption("impl"), self.base)
        if path not in self.loaded:
            try:
                module = load_file(path, f"norm_katas_learner_{Path(entry.file).stem}")
                self.loaded[path] = LearnerModule(module, path)
            except limits.TimedOut as e:  # the check's time limit ran out during the import
                self.loaded[path] = LoadError(
                    f"importing {display_path(path)} did not finish in time: {e.detail}\n"
                    "Does top-level code loop forever?"
                )
                if self.report is not None:
                    self.report.load_error = str(self.loaded[path])
            except LoadError as e:
                self.loaded[path] = e
                if self.report is not None:
                    self.report.load_error = str(e)
        result = self.loaded[path]
        if isinstance(result, LoadError):
            pytest.fail(str(result), pytrace=False)
        return result

    # -- time limits ----------------------------------------------------------------------
    # pytest-timeout reads --timeout and the `timeout` marker and asks for a timer per check;
    # in a grading, the timer is a limits.Budget. Elsewhere (the self-tests) its own timer runs.
    @pytest.hookimpl(optionalhook=True)
    def pytest_timeout_set_timer(self, item: pytest.Item, settings: Any) -> bool | None:
        if self.report is None:
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

    # The budget counts a check's setup, call and teardown: not pytest's report of a failure
    # (which reads source files), nor the checklist.
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

    # -- the checklist --------------------------------------------------------------------
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:  # a suite that does not import: the grader's fault, not the learner's
            self.grader_errors.append(f"{report.nodeid}: {report.longreprtext.strip()}")

    def pytest_internalerror(self, excrepr: Any) -> None:
        self.grader_errors.append(str(excrepr))
        self._write_json()

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self._deselected.extend(items)

    # Last, so that -k and -m have deselected what they leave out: the checklist is the rest.
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        modules = {getattr(item.module, "KATA", None) for item in items if hasattr(item, "module")}
        modules.discard(None)
        if len(modules) != 1:
            return  # not a single kata's suite (the self-tests): plain pytest output
        entry = registry.get(modules.pop())
        self.learner = registry.resolve_impl(entry, self.config.getoption("impl"), self.base)
        self.report = Report(entry.name, entry.title, display_path(self.learner), str(self.target))
        for item in self._deselected:
            if (tier := _tier(item)) != INFO:  # leaving out a report decides nothing
                self.report.deselected[tier] += 1
        # The interview core runs (and is listed) first, then torch parity, each in suite order;
        # information-only reports last, apart from the checks.
        tiers = {item.nodeid: _tier(item) for item in items}
        items.sort(key=lambda item: (CORE, PARITY, INFO).index(tiers[item.nodeid]))
        for item in items:
            description, hints = describe(getattr(item, "function", None).__doc__, item.name)
            if hasattr(item, "callspec"):
                description += f" [{item.callspec.id}]"
            broad = item.get_closest_marker("broad") is not None
            check = Check(item.name, description, hints, tier=tiers[item.nodeid], broad=broad)
            self.checks[item.nodeid] = check
            self.report.checks.append(check)
        self._write_json()  # unfinished until sessionfinish: tells the runner the run began
        # A suite may add what --device means for it (SyncBatchNorm: ranks on gloo, not nccl).
        suite = getattr(items[0], "module", None) if items else None
        # A suite may say what grading without the asked device means for it (Triton: the
        # kernel runs in the interpreter, not on simulated CUDA).
        missing = self.device_note and getattr(suite, "NO_DEVICE_NOTE", None)
        notes = [missing or self.device_note, _suite_note(suite, self.target)]
        if self.printer:
            self.printer.header(self.report, "\n".join(n for n in notes if n) or None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]):
        outcome = yield
        check = self.checks.get(item.nodeid)
        report = outcome.get_result()
        if check is None:
            return
        check.seconds = round(check.seconds + report.duration, 4)
        # What the learner's code printed: each phase's report holds the phases before it too.
        if printed := (report.capstdout + report.capstderr).strip("\n"):
            check.output = printed
        if check.outcome in ("failed", "skipped"):
            return
        if call.excinfo is not None and call.excinfo.errisinstance(
            (CannotGrade, limits.GraderTooSlow)
        ):
            message = str(call.excinfo.value)
            if message not in self.grader_errors:  # a module fixture fails every check alike
                self.grader_errors.append(message)
            if self.session is not None:
                self.session.shouldstop = "the grader cannot grade here"
            return
        if report.failed and call.excinfo is not None:
            check.outcome = "failed"
            check.kind, check.message = explain(call.excinfo, self.learner)
            if call.excinfo.errisinstance(Belongs):
                check.belongs = call.excinfo.value.check
            if check.kind == TIMEOUT:
                self._count_timeout()
        elif report.skipped:
            check.outcome = "skipped"
            longrepr = report.longrepr
            check.message = (
                longrepr[2].removeprefix("Skipped: ") if isinstance(longrepr, tuple) else ""
            )
        elif report.when == "call" and report.passed:
            check.outcome = "passed"

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        check = self.checks.get(nodeid)
        if self.printer and check is not None and self.report and not self.grader_errors:
            self.printer.running(check, self.report)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        check = self.checks.get(nodeid)
        if self.printer and check is not None and not self.grader_errors:
            self.printer.check(check, self.report)
        elif self.printer:
            self.printer.erase()  # the runner says why the grading stopped
        # A sign of progress for the runner, which stops a grading that makes none.
        if path := self.config.getoption("report_json"):
            with contextlib.suppress(OSError):
                os.utime(path)

    def _count_timeout(self) -> None:
        self.timeouts += 1
        if self.timeouts >= MAX_TIMEOUTS and self.session is not None:
            self.session.shouldstop = "checks kept timing out"
            if self.report is not None:
                self.report.stopped = (
                    f"{self.timeouts} checks timed out, so your code seems to loop forever; "
                    "the remaining checks were not run."
                )

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.report is None:
            self._write_json()
            return
        self.report.finished = True
        # Finished before the verdict shows: watch mode never cancels a grading whose verdict
        # the learner has seen (runner._wait lets a finished report's child end).
        self._write_json()
        if self.printer and not self.grader_errors:  # the runner says why nothing was graded
            self.printer.verdict(self.report)
        if self.config.getoption("perf"):
            self._perf(session)
        self._write_json()
        # Interrupted (2) too: checks that kept timing out stop the run, the learner's loop.
        if not self.grader_errors and session.exitstatus in (0, 1, 2):
            # Solved means the interview core passes; --strict asks for parity too.
            strict = self.config.getoption("strict_parity")
            solved = self.report.strict_solved if strict else self.report.solved
            if self.report.partial:  # -k or -m: as pytest, whether the selected checks pass
                solved = self.report.selection_passes(strict)
            session.exitstatus = 0 if solved else 1

    def _perf(self, session: pytest.Session) -> None:
        """--perf: the suite's perf_case, timed against torch's built-in (never graded)."""
        from norm_katas.grader import perf

        suite = next((item.module for item in session.items if hasattr(item, "module")), None)
        make_case = getattr(suite, "perf_case", None)
        if self.report is None or make_case is None or self.report.load_error:
            return
        try:
            kata = self.load(suite.KATA)
            torch.manual_seed(0)
            result = perf.report(make_case(kata, self.target), self.target)
        except BaseException as e:  # the learner's constructor, say: report, never crash
            result = {"given": self.report.title, "device": str(self.target)}
            result["error"] = f"your code raised {type(e).__name__}: {e}".strip()
        self.perf = result
        if self.printer:
            self.printer.write("\n" + perf.format_report(result))

    def _write_json(self) -> None:
        path = self.config.getoption("report_json")
        if not path:
            return
        if self.report is not None:
            data = self.report.to_json(hints=self.config.getoption("hints"))
        else:  # nothing to grade with: only the grader's own errors, if any
            data = {"finished": True, "checks": []}
        data["grader_errors"] = self.grader_errors
        if self.perf is not None:
            data["perf"] = self.perf
        Path(path).write_text(json.dumps(data, indent=2))


def _suite_note(suite: Any, device: torch.device) -> str | None:
    note = getattr(suite, "device_note", None)
    return note(device) if callable(note) else None


def _tier(item: pytest.Item) -> str:
    if item.get_closest_marker("info") is not None:
        return INFO
    return PARITY if item.get_closest_marker("parity") is not None else CORE


def _null_writer() -> Any:
    from _pytest.terminal import TerminalWriter

    return TerminalWriter(open(os.devnull, "w"))
