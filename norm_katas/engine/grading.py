"""A grading's state, as a pytest plugin object: the request, the checklist being built, how
each check ends, and the run's end. Its hooks call the jobs' modules (checklist, timer,
learners, json_report, conditions, perf) and print through the report's Printer.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from norm_katas.checks.suite import declared
from norm_katas.content import registry
from norm_katas.engine import shards
from norm_katas.engine.checklist import (
    checklist,
    grader_error,
    interrupt_raised_fails,
    record_outcome,
    stub_pitfalls,
)
from norm_katas.engine.conditions import (
    learners_output,
    torch_log_muted,
    uninitialized_memory_filled,
)
from norm_katas.engine.json_report import JsonReport
from norm_katas.engine.learners import Learners, kata_of
from norm_katas.engine.report import (
    TIMEOUT,
    Check,
    Outcome,
    Printer,
    Report,
    choose_hints,
    describe,
    exit_code,
)
from norm_katas.engine.request import Request, UsageError, resolve_device
from norm_katas.engine.timer import CheckTimer
from norm_katas.runtime.limits import TRITON_SLOW
from norm_katas.runtime.loader import LearnerModule, LoadError

MAX_TIMEOUTS = 2  # after this many checks hang, the learner's code loops: stop waiting


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


def _from_options(config: pytest.Config, kata: registry.Kata) -> Request:
    """pytest run directly: the plugin's options make the kata's request (base: where the
    user ran it), through the resolvers every door uses."""
    return Request.create(
        kata, config.getoption("impl"), device=config.getoption("device"),
        report_json=config.getoption("report_json"), strict=config.getoption("strict_parity"),
        hints=config.getoption("hints"), expand=config.getoption("expand"),
        perf=config.getoption("perf"), checklist=config.getoption("checklist"),
    )  # fmt: skip


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
        self.interpreted_timeouts = 0  # of them, those in a kernel Triton's interpreter ran
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
        self.pitfalls = stub_pitfalls(request.kata)
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
            watch=request.watch,
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
            self._count_timeout(getattr(error, "busy", True), TRITON_SLOW in check.message)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from interrupt_raised_fails())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from interrupt_raised_fails())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from interrupt_raised_fails())

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

    def _count_timeout(self, busy: bool, interpreted: bool = False) -> None:
        """A check timed out: looping on the CPU (busy) or waiting idle, `interpreted` in a
        Triton kernel run by the interpreter. After a few, stop, saying which the learner's
        code seems to do, as each check's own message did."""
        self.timeouts += 1
        self.busy_timeouts += busy
        self.interpreted_timeouts += interpreted
        if self.timeouts >= MAX_TIMEOUTS and self.session is not None:
            self.session.shouldstop = "checks kept timing out"
            if self.interpreted_timeouts == self.timeouts:
                seems = "to loop forever, or to be too slow for Triton's interpreter"
            elif self.busy_timeouts == self.timeouts:
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
        # the learner has seen (runner.launch lets a finished report's child end).
        self.json.write(self.report, self.grader_errors)
        if self.printer and not self.grader_errors:  # the runner says why nothing was graded
            self.printer.verdict(self.report)
        if self.request.perf:
            from norm_katas.engine import perf

            self.report.perf = perf.measure_suite(session, self.report, self.load, self.target)
            if self.printer and self.report.perf is not None:
                self.printer.write("\n" + perf.format_report(self.report.perf))
            self.json.write(self.report, self.grader_errors)
        # Interrupted (2) too: checks that kept timing out stop the run, the learner's loop.
        if not self.grader_errors and session.exitstatus in (0, 1, 2):
            session.exitstatus = exit_code(self.report, self.request.strict)


def _unread_repr(excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
    """pytest's record of a failed check, where nothing prints it: the exception, no traceback."""
    return excinfo.exconly()


def _null_writer() -> Any:
    from _pytest.terminal import TerminalWriter

    return TerminalWriter(open(os.devnull, "w"))
