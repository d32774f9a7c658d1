"""What runs in a child of the test-writing mode: the learner's test file under pytest, its
`kata` fixture bound to each candidate layer in turn (content.candidates), one line of JSON
written for each test's outcome on each candidate.

The candidates come as source text and are executed as the same module (the kata's file name,
in this child's scratch folder), one after the other: the tests cannot tell them apart by name
or path. A wrong candidate is caught by its first failing test, so the tests after it are
skipped for that candidate; a correct one runs every test, so that every false alarm is known.
Each test's setup, call and teardown count against a CPU-time limit (engine.timer).
The learner's test file may not import the grader, the reference solution, the catalogue or
the suites: `guard_imports` stops such an import where it runs, with a message that says so.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import json
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from norm_katas.content import registry
from norm_katas.engine import conditions
from norm_katas.engine.proving.ranks import Ranks
from norm_katas.engine.runner.child import PYTEST_NO_PLUGINS, _one_thread
from norm_katas.engine.timer import CheckTimer
from norm_katas.runtime.outcomes import TimedOut

# The packages a learner's tests may not import: the grader, the reference solutions, the
# hidden suites with their catalogue and mutants, and the repository's tools.
FORBIDDEN = ("norm_katas", "solutions", "tests", "tools", "conftest")
CAUGHT = "caught already by an earlier test"  # the skip reason of a caught candidate's tests
NOT_JUDGED = "not judged"  # the skip reason of a test that met a fault of Triton's engine


class Forbidden(ImportError):
    """The learner's tests imported what they may not."""


def forbidden(name: str) -> bool:
    top = name.split(".")[0]
    suites = {f"test_{kata.stem}" for kata in registry.load()}
    return top in FORBIDDEN or top in suites


def guard_imports(tests_file: Path) -> None:
    """From here on, an import made by code in `tests_file` of a forbidden module raises
    Forbidden (import statements and importlib.import_module alike)."""
    mine = str(tests_file)
    importing = builtins.__import__
    import_module = importlib.import_module

    def refuse(name: str) -> None:
        raise Forbidden(
            f"your tests import {name}: they get the layer under test from the kata fixture, "
            "and test it with torch and pytest alone (not the grader, the reference solution "
            "or its hidden checks)"
        )

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and globals and globals.get("__file__") == mine and forbidden(name):
            refuse(name)
        return importing(name, globals, locals, fromlist, level)

    def guarded_import_module(name: str, package: str | None = None) -> types.ModuleType:
        caller = sys._getframe(1).f_globals.get("__file__")
        if caller == mine and not name.startswith(".") and forbidden(name):
            refuse(name)
        return import_module(name, package)

    builtins.__import__ = guarded
    importlib.import_module = guarded_import_module


class Bound:
    """The plugin that binds `kata` to each candidate and records what each test did."""

    def __init__(self, sources: list[str], stem: str, scratch: Path, log: Path) -> None:
        self.sources, self.stem, self.scratch, self.log = sources, stem, scratch, log
        self.wrong: set[int] = set()  # candidates a failing test has caught
        self.stop_at_first: list[bool] = []
        # Tests that failed on a correct layer (known once the correct layers have run): their
        # failure catches nothing, so it does not end a wrong layer's run either.
        self.alarming: set[str] = set()
        self.place = scratch / "layer" / f"{stem}.py"
        self.place.parent.mkdir(parents=True, exist_ok=True)
        self.out = log.open("a", encoding="utf-8", buffering=1)
        # The Triton engine (checks.triton_engine) for a Triton kata, started; else None.
        self.triton: Any = None
        self.cpu_limit = 10.0  # each test's CPU time on each layer, and each rank's (`ranks`)
        self.tests_file: Path | None = None  # the learner's: where a rank's error is told
        self.outside: type[BaseException] = AssertionError

    def module(self) -> types.ModuleType:
        """A module that pytest registers as the plugin holding the `kata` fixture."""
        bound = self

        @pytest.fixture(scope="module", params=range(len(self.sources)), ids=self._ids())
        def kata(request: pytest.FixtureRequest) -> types.ModuleType:
            """The layer under test: the kata's module, with its classes and functions."""
            return bound.load(request.param)

        @pytest.fixture
        def ranks() -> Ranks:
            """ranks(fn, world_size=2): fn(rank, world_size) run on each rank of a process
            group (gloo), each a process forked from the test's; what each returned, by rank."""
            return Ranks(bound.scratch, bound.cpu_limit, bound.tests_file)

        plugin = types.ModuleType("norm_katas_layer_under_test")
        plugin.kata = kata  # type: ignore[attr-defined]
        plugin.ranks = ranks  # type: ignore[attr-defined]
        return plugin

    def _ids(self) -> list[str]:
        return [f"layer{i}" for i in range(len(self.sources))]

    def load(self, index: int) -> types.ModuleType:
        self.place.write_text(self.sources[index], encoding="utf-8")
        module = types.ModuleType(self.stem)
        module.__file__ = str(self.place)
        sys.modules[self.stem] = module  # dataclasses and pickling look the module up here
        try:
            # dont_inherit: not this module's `from __future__ import annotations`, which would
            # turn the layer's annotations into strings (Triton 3.0 then misses tl.constexpr).
            code = compile(self.sources[index], str(self.place), "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except Exception as e:
            # One of the grader's own layers did not load: no test of the learner's failed, and
            # counting it as caught would falsify the verdict. The grading ends as the grader's.
            self._write(
                {"grader_error": f"a layer under test did not load: {type(e).__name__}: {e}"}
            )
            pytest.exit("a layer under test did not load", returncode=3)
        self._write({"loaded": index})
        return module

    @staticmethod
    def candidate(item: pytest.Item) -> int | None:
        callspec = getattr(item, "callspec", None)
        return None if callspec is None else callspec.params.get("kata")

    def caught(self, item: pytest.Item) -> bool:
        index = self.candidate(item)
        return index is not None and index in self.wrong and self.stop_at_first[index]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        """pytest's loop, but a wrong layer's tests after its first failure are not run at all
        (a skip would still cost pytest's every hook, for hundreds of layers)."""
        if session.testsfailed and session.config.option.continue_on_collection_errors is False:
            raise session.Interrupted(f"{session.testsfailed} errors during collection")
        items = session.items
        for i, item in enumerate(items):
            if self.caught(item):
                continue
            nextitem = items[i + 1] if i + 1 < len(items) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
        return True

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if self.caught(item):
            pytest.skip(CAUGHT)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        # As every hidden check runs: memory the layer allocates and never writes reads the
        # same on every run (a buffer made with torch.empty is caught every time, not by
        # chance), and torch's own loggers say nothing. A Triton kata's launches are watched
        # (triton_engine.watched): an access outside the kernel's tensors fails the test, and
        # a test that met an engine fault is not judged.
        error: BaseException | None = None
        with (
            conditions.torch_log_muted(),
            conditions.uninitialized_memory_filled(),
            self.watch() as seen,
        ):
            try:
                result = yield
            except BaseException as e:  # pytest's outcomes (fail, skip) are BaseExceptions
                error = e
        stopping = (TimedOut, KeyboardInterrupt, SystemExit, pytest.exit.Exception)
        if seen is not None and seen.unjudged and not isinstance(error, stopping):
            pytest.skip(f"{NOT_JUDGED}: {seen.unjudged}")
        if error is not None:
            raise error
        if seen is not None and seen.outside:
            raise self.outside(seen.outside)
        return result

    @contextlib.contextmanager
    def watch(self) -> Iterator[Any]:
        """The Triton engine's watch over a test's launches (a Seen), or None for other katas."""
        if self.triton is None:
            yield None
            return
        with self.triton.watched() as seen:
            yield seen

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Iterator:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        index = self.candidate(item)
        if index is None:
            return
        name = _test_name(item, index)
        if report.failed:
            if _test_name(item, index) not in self.alarming:
                self.wrong.add(index)
            error = call.excinfo.value if call.excinfo is not None else None
            if isinstance(error, Forbidden):  # the file's own doing, on every layer alike
                self._write({"collect_error": f"{name}: {error}"})
                item.session.shouldstop = "a forbidden import"
                return
            kind = "timeout" if isinstance(error, TimedOut) else "failed"
            self._write(
                {"candidate": index, "test": name, "item": item.name, "outcome": "failed",
                 "kind": kind, "phase": report.when, "message": _message(report, call)}
            )  # fmt: skip
            if kind == "timeout" and not self.stop_at_first[index]:
                item.session.shouldstop = "a test ran out of time on a correct layer"
        elif report.when == "call" and report.passed:
            self._write({"candidate": index, "test": name, "item": item.name, "outcome": "passed"})
        elif report.skipped and report.when in ("setup", "call"):
            reason = _message(report, call)
            if CAUGHT not in reason:
                record = {"candidate": index, "test": name, "item": item.name, "outcome": "skipped"}
                if reason.startswith(NOT_JUDGED):
                    record["unjudged"] = reason.removeprefix(f"{NOT_JUDGED}: ")
                self._write(record)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._write({"collect_error": _collect_message(report)})

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        tests = sorted({i.name.split("[")[0] for i in session.items})
        bound = sorted(
            {i.name.split("[")[0] for i in session.items if self.candidate(i) is not None}
        )
        self._write({"collected": tests, "take_the_layer": bound})

    def _write(self, record: dict[str, Any]) -> None:
        self.out.write(json.dumps(record) + "\n")


def _test_name(item: pytest.Item, index: int) -> str:
    """The test as the learner knows it: its name, with its own parameters' ids but not the
    layer's (test_p[float64], for test_p[layer3-float64])."""
    base = item.originalname if isinstance(item, pytest.Function) else item.name
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return base
    layer = f"layer{index}"
    ids = callspec.id
    for cut in (f"{layer}-", f"-{layer}", layer):
        if cut in ids:
            ids = ids.replace(cut, "", 1)
            break
    return f"{base}[{ids}]" if ids else base


def _message(report: pytest.TestReport, call: pytest.CallInfo) -> str:
    """The failure's message as pytest's summary line gives it: the exception and its text."""
    excinfo = call.excinfo
    if excinfo is not None:
        text = str(excinfo.value).strip()
        name = excinfo.typename
        if name in ("Failed", "Skipped", "TimedOut"):
            return text.splitlines()[0] if text else name
        first = text.splitlines()[0] if text else ""
        return f"{name}: {first}" if first else name
    crash = getattr(report.longrepr, "reprcrash", None)
    return str(crash.message if crash is not None else report.longrepr or "").splitlines()[0]


def _collect_message(report: pytest.CollectReport) -> str:
    text = str(report.longrepr or "")
    lines = [line for line in text.splitlines() if line.strip()]
    errors = [line[1:].strip() and line[4:] for line in lines if line.startswith("E ")]
    return "\n".join(errors[-4:] or lines[-4:])


def _seeding_without_accelerators() -> None:
    """torch.manual_seed also seeds every accelerator's generator; where none is available, it
    queues a seeding of each for later, with a formatted copy of the stack (a millisecond a
    call, under pytest's deep stack), which never happens. Tests seed often, on hundreds of
    layers: here it seeds the CPU's generator alone, which is all it does in effect."""
    import torch

    xpu = getattr(torch, "xpu", None)
    if (
        torch.cuda.is_available()
        or torch.backends.mps.is_available()
        or (xpu is not None and xpu.is_available())
    ):
        return
    generator = torch.default_generator

    def manual_seed(seed: int) -> torch.Generator:
        return generator.manual_seed(int(seed))

    manual_seed.__doc__ = torch.manual_seed.__doc__
    torch.manual_seed = torch.random.manual_seed = manual_seed


def start_engine(stem: str, bound: Bound | None = None) -> str | None:
    """For a Triton kata, Triton's engine started and proven before any layer loads (the
    kernels run in its interpreter, @triton.jit reading the mode as they are defined), once per
    process: a child forked from a parent that started it finds it started. Why it cannot be,
    or None."""
    kata = next((k for k in registry.load() if k.stem == stem), None)
    if kata is None or not kata.triton:
        return None
    import torch

    from norm_katas.checks import triton_engine
    from norm_katas.runtime.outcomes import CannotGrade

    try:
        triton_engine.start(torch.device("cpu"))
    except CannotGrade as e:
        return f"Triton's engine cannot run the layers here: {e}"
    if bound is not None:
        bound.triton, bound.outside = triton_engine, triton_engine.OutsideItsTensors
    return None


def run(
    tests_file: Path, sources: list[str], first_only: list[bool], stem: str, scratch: Path,
    log: Path, timeout: float, alarming: set[str] | None = None,
) -> int:  # fmt: skip
    """Run the learner's tests on the candidates `sources`; pytest's exit code. first_only[i]:
    candidate i is wrong, so its remaining tests are skipped once one fails."""
    sys.dont_write_bytecode = True  # the same path holds each candidate in turn
    sys.path[:] = [os.path.abspath(p) for p in sys.path]
    # Catalogue layers built on the reference import it (`from solutions.<stem> import ...`):
    # importable from the content's root, a clone's or an installed copy's (norm_katas/_content).
    if str(registry.ROOT) not in sys.path:
        sys.path.append(str(registry.ROOT))
    os.chdir(scratch)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    _one_thread()
    _seeding_without_accelerators()
    bound = Bound(sources, stem, scratch, log)
    if problem := start_engine(stem, bound):
        bound._write({"grader_error": problem})
        bound.out.close()
        return 3
    guard_imports(tests_file)
    bound.stop_at_first = first_only
    bound.alarming = alarming or set()
    bound.cpu_limit, bound.tests_file = timeout, tests_file
    timer = CheckTimer()
    timer.grading = True
    # A configuration of its own (none of the repository's or the learner's folder's), and a
    # rootdir away from the suites: importlib names the module after its path from there, so it
    # is never taken for the hidden suite of the same name (test_<kata>).
    # --tb=no: pytest formats no traceback for a failed test (most of the time a wrong layer's
    # first failure took); the report's message is read from the exception itself.
    config = scratch / "pytest.ini"
    config.write_text("[pytest]\n", encoding="utf-8")
    command = [
        *PYTEST_NO_PLUGINS, "-p", "no:cacheprovider", "-p", "pytest_timeout",
        f"--timeout={timeout!r}", "--noconftest", "--import-mode=importlib", "-q",
        "-c", str(config), "--rootdir", str(scratch), "-W", "ignore", "--tb=no", str(tests_file),
    ]  # fmt: skip
    with open(os.devnull, "w") as quiet:
        saved = sys.stdout
        sys.stdout = quiet
        try:
            code = pytest.main(command, plugins=[bound, bound.module(), timer])
        finally:
            sys.stdout = saved
    bound.out.close()
    return int(code)


def imports_of(tests_file: Path) -> list[tuple[int, str]]:
    """The forbidden modules the file imports by name: (line, statement). Read before any
    grading, so that the message names the line."""
    try:
        tree = ast.parse(tests_file.read_bytes())
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        if any(forbidden(name) for name in names):
            found.append((node.lineno, ast.unparse(node)))
    return found
