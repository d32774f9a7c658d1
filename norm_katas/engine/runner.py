"""Grade a file in a child process, so that nothing the learner's code does can take the grader
down with it, and so that a long-lived parent grades each save without importing torch again.

The parent imports torch, pytest, the plugin and the kata suites once (`warm_up`); each grading
then runs in a child forked from it. os._exit, a segfault, an endless loop or a huge allocation
in the learner's code cost that child only. The parent never initialises CUDA, so a child may;
where fork is unavailable or unsafe, the child is a fresh interpreter instead.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import inspect
import json
import os
import platform
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from norm_katas.content import registry
from norm_katas.engine import suggest
from norm_katas.engine.request import (
    CHECK_TIMEOUT_S,
    GRADER_FAILED,
    NOT_SOLVED,
    SOLVED,
    USAGE,
    Request,
)
from norm_katas.runtime import processes

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from norm_katas.engine.report import Report
    from norm_katas.runtime.limits import Frame

# A grading in which no check finishes for this long (or twice a check's own wall-clock net,
# if longer) is stopped: a safety net for what a check's limit cannot interrupt (a hang inside C).
GRADING_LIMIT_S = 300
PYTEST_INTERRUPTED, PYTEST_USAGE_ERROR, PYTEST_NO_TESTS = 2, 4, 5


class GraderError(Exception):
    """The grader itself cannot grade: not the learner's fault. str() is the message."""


@dataclass
class Graded:
    code: int
    report: Report | None
    cancelled: bool = False  # stopped by the caller's cancel(): no verdict, nothing to record


class Cancelled:
    """A grading stopped because the caller's cancel() said so (watch mode: a new save)."""


@dataclass
class Stalled:
    """A grading stopped for making no progress, and where its main thread was then."""

    seconds: float
    frames: list[Frame] | None  # innermost first; None where the process could not say


def environment() -> str:
    """'torch 2.13.0+cpu, Python 3.11.7, Linux x86_64': what a bug report needs."""
    torch = sys.modules.get("torch")
    version = getattr(torch, "__version__", "not imported")
    python = platform.python_version()
    return f"torch {version}, Python {python}, {platform.system()} {platform.machine()}"


def grader_failed(cause: str, details: str = "", whose: str = "") -> str:
    """The message for a grader failure: the cause, the versions, and where to look. `whose`:
    whose problem it may be, where that is not the grader's or its environment's alone."""
    lines = [
        f"norm-katas could not grade: {cause}",
        whose or "This is a problem with the grader or its environment, not with your code.",
        f"  environment: {environment()} ({sys.executable})",
        "  where to look: 'When the grader itself fails' in docs/troubleshooting.md; "
        "report it with this message if that does not help.",
    ]
    if details:
        lines += ["", details.rstrip()]
    return "\n".join(lines)


# What every grading imports besides torch: pytest, its timeout plugin and the grader.
GRADING_MODULES = (
    "pytest", "pytest_timeout", "norm_katas.checks", "norm_katas.runtime.fake_cuda",
    "norm_katas.engine.plugin",
)  # fmt: skip


def warm_up(
    katas: list[registry.Kata], *, long_lived: bool = False, device: str | None = None
) -> None:
    """Import everything a grading needs into this process, or raise GraderError.

    long_lived: this process will grade many times (watch mode, a mock, the self-tests), so
    also import what each child would otherwise import again on first use (torch._dynamo,
    loaded by torch's reference implementations on the meta and fake devices).
    device: every grading of this process is on it (watch mode, a mock), so a Triton kata's
    engine is proven here once, where that leaves CUDA alone (triton_engine.prepare).
    """
    # OpenMP threads that wait for work sleep instead of spinning. Spinning costs nothing on
    # an idle machine, but on a busy one a thread spins while the one it waits for is not even
    # running: a grading then took 4 times as long, and its main thread used 3 times the CPU
    # time, which its time limits count (runtime.limits). Read once, when torch loads OpenMP.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
    except ImportError as e:
        raise GraderError(grader_failed(f"torch is not installed for this Python ({e}).")) from None
    try:
        from norm_katas.runtime import torch_compat

        if reason := torch_compat.unsupported():
            raise GraderError(reason)
        if not long_lived:  # one grading: torch._dynamo only if something needs more of it
            torch_compat.defer_dynamo()
        for module, package in (("pytest", "pytest>=8"), ("pytest_timeout", "pytest-timeout>=2.3")):
            if importlib.util.find_spec(module) is None:
                name = package.split(">")[0]
                how = suggest.install(package, "<name>", sys.executable)
                raise GraderError(grader_failed(f"{name} is not installed for this Python. {how}"))
        for name in GRADING_MODULES:
            importlib.import_module(name)
    except GraderError:
        raise
    except Exception as e:
        raise GraderError(grader_failed(processes.cause(e), processes.where(e))) from None
    suites = str(registry.ROOT / "tests")
    if suites not in sys.path:
        sys.path.insert(0, suites)  # as pytest's default import mode does for tests/test_*.py
    for kata in katas:
        try:
            importlib.import_module(kata.suite.stem)
        except Exception as e:
            raise GraderError(
                grader_failed(
                    f"the checks of {kata.name} do not load: {processes.cause(e)}",
                    processes.where(e),
                )
            ) from None
    if long_lived:
        import torch._dynamo

        _import_what_children_use(katas)
        _prepare_pytest()
        if device is not None and any(_needs_triton(kata) for kata in katas):
            from norm_katas.checks import triton_engine

            triton_engine.prepare(torch.device(device))
    if torch.cuda.is_initialized():  # a fork would leave the child with a broken CUDA context
        raise GraderError(grader_failed("CUDA was initialised before grading started."))
    # Everything imported so far lives as long as the process: keep it out of the collector's
    # sight, so that a child's gc.collect() (pytest runs two) does not walk torch's whole heap,
    # and its pages stay shared with the parent instead of being copied on write. The collector
    # is back on from here if the command turned it off while it started (cli.main).
    gc.freeze()
    gc.enable()


def _needs_triton(kata: registry.Kata) -> bool:
    return any(req.startswith("triton") for req in kata.requires)


def _import_what_children_use(katas: list[registry.Kata]) -> None:
    """Import here, once, what every grading's child would import on first use, so that each
    child finds it in sys.modules (a few percent of a short grading: nox -s mutants and the
    self-tests grade thousands). Each is optional: a child imports what is missing itself."""
    # pytest imports its built-in plugins (and through them pdb, xml.etree, ...) in every
    # pytest.main, and some modules on first use (pdb for --pdb's plugin, ...).
    from _pytest.config import default_plugins

    names = [f"_pytest.{name}" for name in default_plugins]
    names += ["pdb", "_pytest._argcomplete", "encodings.unicode_escape"]
    if any(_needs_triton(kata) for kata in katas):
        # Triton's first kernel launch imports its gluon package (a tenth of a second),
        # whichever mode the kernel runs in.
        names.append("triton.experimental.gluon.nvidia.hopper")
    for name in names:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def preload(kata: registry.Kata) -> None:
    """Import into this process what each grading's child would otherwise import afresh:
    torch, torch._dynamo, pytest and the grader (two to three seconds a grading).

    For a process that grades now and then and is the learner's own, a notebook's kernel or a
    script calling norm_katas.check, so without warm_up's other effects: its objects stay
    collectable, its import path and environment stay as they are, and whatever fails to
    import is left for the grading's child to meet and report. The collector pauses while
    they import (as in cli.main), and is left as it was.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        for name in ("torch", "torch._dynamo", *GRADING_MODULES):
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        with contextlib.suppress(Exception):
            _import_what_children_use([kata])
    finally:
        if collecting:
            gc.enable()


def missing_requirements(kata: registry.Kata, where: str = suggest.TERMINAL) -> str | None:
    """The learner-facing message when a package this kata needs is not installed."""
    for requirement in kata.requires:
        name = requirement.split(";")[0].strip()
        for sep in "<>=!~[ ":
            name = name.split(sep)[0]
        if importlib.util.find_spec(name) is None:
            how = suggest.install(requirement, kata.name, sys.executable, where)
            return (
                f"The {kata.name} kata needs {name}, which is not installed for this Python "
                f"({sys.executable}). {how}"
            )
    return None


def grade(
    request: Request,
    *,
    out: TextIO | None = None,
    limit: float = GRADING_LIMIT_S,
    cancel: Callable[[], bool] | None = None,
) -> Graded:
    """Grade in a child process; returns the exit code and the report (None if none was made).

    The checklist goes to `out` (default: this process's stdout and stderr). `cancel` is asked
    about ten times a second while the child runs; when it says True the child and all it
    started are killed, and the outcome is `cancelled`, with no report.
    """
    from norm_katas.engine.report import Report
    from norm_katas.runtime.limits import wall_net

    out = out or sys.stderr
    if reason := missing_requirements(request.kata, request.door):
        print(reason, file=out, flush=True)
        return Graded(GRADER_FAILED, None)
    limit = max(limit, 2 * wall_net(request.timeout) + 60)  # a check's own limits act first
    # ignore_cleanup_errors: a rank killed with its grading may still be writing its log there.
    with tempfile.TemporaryDirectory(prefix="norm-katas-", ignore_cleanup_errors=True) as tmp:
        path = Path(tmp) / "report.json"
        scratch = Path(tmp) / "work"  # the learner's code runs here: see child_main
        scratch.mkdir()
        # The child writes its report here; the user's --report-json gets a copy.
        status = _run_child(replace(request, report_json=path), scratch, out, limit, cancel)
        if isinstance(status, Cancelled):
            return Graded(NOT_SOLVED, None, cancelled=True)
        report = Report.from_json(json.loads(path.read_text())) if path.exists() else None
        crash = path.with_suffix(".crash")
        details = crash.read_text() if crash.exists() else ""
        if request.report_json is not None and path.exists():
            try:  # checked at the door (request.resolve_report), but the folder may have gone
                shutil.copyfile(path, request.report_json)
            except OSError as e:
                print(f"The verdict was not written to {request.report_json}: {e}", file=out)
    if hasattr(signal, "SIGPIPE") and status == -signal.SIGPIPE:
        if _reader_gone(out):
            # Whoever read the checklist stopped reading (`| head`): nothing to say, and an
            # unfinished report that is no attempt to record.
            return Graded(NOT_SOLVED, None)
        cause = "its process wrote to a pipe that nobody reads (SIGPIPE) and was stopped."
        print(grader_failed(cause, details), file=out, flush=True)
        return Graded(GRADER_FAILED, None)
    return Graded(_verdict(status, report, request, details, out), report)


def _verdict(
    status: int | Stalled, report: Report | None, request: Request, details: str, out: TextIO
) -> int:
    """The exit code of a grading, and what to say when it is not the checklist's own."""
    from norm_katas.engine.report import exit_code

    def say(text: str) -> None:
        print(text, file=out, flush=True)

    if isinstance(status, Stalled):
        return _stalled(status, out)
    if report is None:
        if status == PYTEST_USAGE_ERROR:
            return USAGE  # pytest has said why (--device mps without one, ...)
        cause = f"the grading process ended ({processes.exit_status(status)}) before any check ran."
        say(grader_failed(cause, details))
        return GRADER_FAILED
    if errors := report.grader_errors:
        whose = ""
        if request.timeout < CHECK_TIMEOUT_S:
            whose = (
                f"Not a problem with your code: the grader, its environment, or a --timeout of "
                f"{request.timeout:g} CPU seconds, less than the default {CHECK_TIMEOUT_S:g}, "
                "that leaves a check too little time (see below)."
            )
        say(grader_failed("its checks could not run to the end.", "\n\n".join(errors), whose))
        return GRADER_FAILED
    if not report.finished:
        ended = processes.exit_status(status)
        say(
            f"\nThe grader's process ended abruptly ({ended}) while running your code.\n"
            "Does your file call os._exit(), crash the interpreter, or use up all the memory? "
            "Remove that and grade again."
        )
        return NOT_SOLVED
    if status == PYTEST_NO_TESTS or not report.checks:
        selection = request.selection
        if status == PYTEST_USAGE_ERROR and selection:  # pytest could not read it, and said so
            chosen = (("-k", request.keyword), ("-m", request.marker))
            shown = " ".join(f"{flag} {shlex.quote(value)}" for flag, value in chosen if value)
            say(
                f"{shown} is not an expression pytest can read (its message is above): nothing "
                "was graded. Join words with and, or, not and parentheses, as in "
                '-k "affine and not cuda" or -m "not parity".'
            )
            return USAGE
        matched = f"No check matched {selection}" if selection else "No check ran"
        picks = [
            "-k picks the checks whose name or checklist line holds a word, any case (-k affine, "
            "-k cuda)"
        ]
        if request.marker:
            picks.append("-m the checks with a marker (-m parity: the torch-parity checks)")
        without = "them" if len(picks) > 1 else "it"
        say(
            f"{matched}: nothing was graded. {'; '.join(picks)}; grade without {without} to "
            "see every check."
        )
        return USAGE
    if status not in (SOLVED, NOT_SOLVED, PYTEST_INTERRUPTED):
        say(grader_failed(f"pytest ended with status {status} inside the grader."))
        return GRADER_FAILED
    return exit_code(report, request.strict)  # what the child's plugin ended with, too


def _stalled(stalled: Stalled, out: TextIO) -> int:
    """No check finished for a long while: the learner's code was stuck only if it is where the
    grading was; anywhere else it is the grader's (or the machine's) problem."""
    from norm_katas.runtime.limits import learner_site

    seconds = f"{stalled.seconds:.0f} s"
    if stalled.frames is None:
        cause = (
            f"no check finished for {seconds}, so the grading was stopped; where it was stuck "
            "is unknown on this system."
        )
        print(grader_failed(cause), file=out, flush=True)
        return GRADER_FAILED
    site = learner_site(stalled.frames)
    if site is not None:
        print(
            f"\nNo check finished for {seconds}, so the grading was stopped. It was in your "
            f"code at {site}: a call that never returns (one enormous torch operation, a "
            "wait inside C)?",
            file=out,
            flush=True,
        )
        return NOT_SOLVED
    stack = "\n".join(f"  {frame}" for frame in stalled.frames[:8])
    cause = (
        f"no check finished for {seconds}, so the grading was stopped, in the grader's own work "
        "(your code was not running). The machine may be too busy, or the grader is stuck."
    )
    print(grader_failed(cause, f"Where it was, innermost first:\n{stack}"), file=out, flush=True)
    return GRADER_FAILED


# -- the child ----------------------------------------------------------------------------


def exit_process(code: int) -> NoReturn:
    """End this process without the interpreter's shutdown: Triton's bindings, which
    torch._dynamo imports, print hundreds of lines of false "leaked" warnings there."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


UNUSED_PYTEST_PLUGINS = (
    "doctest", "junitxml", "pastebin", "setuponly", "setupplan", "stepwise", "legacypath",
    "tmpdir", "recwarn", "unittest", "subtests",
)  # fmt: skip
# The plugins a grading's pytest runs without: -p no:NAME, before any other option.
PYTEST_NO_PLUGINS = ("-p", "no:logging", *(f"-pno:{name}" for name in UNUSED_PYTEST_PLUGINS))
# What pytest.main builds first in every grading, built once by a long-lived process (see
# _prepare_pytest), or None. This process never uses it: each child starts from its own copy.
_PREPARED: Any = None


def _prepare_pytest() -> None:
    """Build here, once, the start of every grading's pytest.main: its plugin manager, with
    pytest's own plugins and pytest-timeout registered (a third of a short grading's time,
    and the self-tests and `nox -s mutants` make thousands). A child forked from this process
    starts from its copy (child_main); this process never touches it, so it stays as built.
    Where pytest builds its configuration otherwise, each grading builds its own, as before."""
    global _PREPARED
    try:
        import pytest_timeout
        from _pytest.config import get_config

        takes_prog = "prog" in inspect.signature(get_config).parameters  # pytest 9 on
        prog = {"prog": "pytest.main()"} if takes_prog else {}
        prepared = get_config(list(PYTEST_NO_PLUGINS), None, **prog)
        prepared.pluginmanager.register(pytest_timeout, "pytest_timeout")  # what -p loads
    except Exception:
        return
    _PREPARED = prepared


@contextlib.contextmanager
def _from_prepared() -> Iterator[None]:
    """pytest.main's configuration starts from _PREPARED (this child's copy of it), where
    there is one: pytest builds it with _pytest.config.get_config, in every release since 5."""
    import _pytest.config

    prepared, build = _PREPARED, _pytest.config.get_config
    if prepared is None:
        yield
        return

    def get_config(args=None, plugins=None, **_):  # pytest's signature
        _pytest.config.get_config = build  # used once: another pytest.main builds afresh
        params = _pytest.config.Config.InvocationParams  # as get_config makes them
        prepared.invocation_params = params(args=args or (), plugins=plugins, dir=Path.cwd())
        prepared.pluginmanager.consider_preparse(args or [], exclude_only=True)
        return prepared

    _pytest.config.get_config = get_config
    try:
        yield
    finally:
        _pytest.config.get_config = build


def child_main(request: Request, scratch: Path) -> int:
    """What runs in the child: the kata's suite with the checklist. Returns pytest's code.

    The request comes as it is, resolved (in memory across a fork, from JSON across a spawn),
    and goes to the plugin as a plugin object: pytest's arguments are only pytest's own.
    The learner's code runs with `scratch`, an empty folder of this grading's, as its working
    directory: `open("notes.txt", "w")` or `torch.save(m, "model.pt")` there, at import or in
    forward, writes into that folder, which goes with the grading, and never into the
    repository. What the grading needs is found by absolute paths: the suite, --rootdir, the
    report, the file to grade and the import path.
    """
    import pytest

    from norm_katas.engine.plugin import HandedIn
    from norm_katas.runtime import outcomes

    gc.enable()  # the learner's code runs with the collector on, whoever started this process
    # A relative entry ("" for `python -c`) would import from the scratch folder from now on.
    sys.path[:] = [os.path.abspath(p) for p in sys.path]
    os.chdir(scratch)
    # A KeyboardInterrupt raised by the learner's code fails its check; one from a signal
    # still stops the grading (outcomes.RaisedInterrupt).
    signal.signal(signal.SIGINT, outcomes.on_sigint)
    if hasattr(signal, "SIGPIPE"):
        # Output closed by its reader (`| head`): end quietly, as Unix tools do, rather than
        # report a BrokenPipeError as the grader's failure.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # Only the plugins grading needs. Others installed beside pytest are not part of the verdict
    # (pytest-randomly would reorder the checks), and looking them all up costs every grading.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if not request.perf:
        _one_thread()
    # No logging plugin either: the checklist never shows captured logs, and it re-attaches its
    # handler to every logger torch creates, for each phase of each check.
    # Nor pytest's plugins for what no suite uses (doctests, JUnit XML, temporary folders...):
    # registering and scanning each costs every grading, and the self-tests grade thousands.
    command = [
        *PYTEST_NO_PLUGINS, str(request.kata.suite), "-p", "pytest_timeout",
        "--rootdir", str(registry.ROOT), *request.pytest_argv(),
    ]  # fmt: skip
    with _from_prepared():
        return int(pytest.main(command, plugins=[HandedIn(request)]))


def _one_thread() -> None:
    """The checks' torch work on one CPU thread. Their tensors are small: waking OpenMP's
    threads cost more than the work they shared (an instancenorm grading took a third longer
    on 2 cores), and a float sum's rounding then depends on the code alone, not on how many
    cores the machine has.
    --perf keeps torch's threads: its figures are for the learner's machine."""
    import torch

    torch.set_num_threads(1)


def _reader_gone(out: TextIO) -> bool:
    """Whether the child's output is a pipe whose reader has closed it: its SIGPIPE came from
    there, not from some other pipe, which would be the grader's failure. The child writes to
    `out`, or to this process's stdout and stderr when `out` is one of them (_run_child)."""
    streams = (sys.stdout, sys.stderr) if out in (sys.stdout, sys.stderr) else (out,)
    try:
        poller = select.poll()
        for stream in streams:
            poller.register(stream.fileno(), select.POLLOUT)
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll, or no file descriptor
        return True  # cannot tell: taken for the reader's doing, as `| head` is the usual one


def _run_child(
    request: Request,
    scratch: Path,
    out: TextIO,
    limit: float,
    cancel: Callable[[], bool] | None = None,
) -> int | Stalled | Cancelled:
    """The child's exit code (negative: killed by that signal), Stalled if no check finished
    for `limit` seconds (the child touches the report after each), or Cancelled."""
    assert request.report_json is not None
    report = request.report_json
    for stream in (sys.stdout, sys.stderr, out):
        stream.flush()
    if not processes.fork_is_safe():
        handed = report.with_name("request.json")  # the request, as data: nothing to parse
        handed.write_text(request.to_json())
        command = [sys.executable, "-m", "norm_katas", "_child", str(handed), str(scratch)]
        # Started in the repository, so that `-m norm_katas` imports; child_main moves to scratch.
        child = subprocess.Popen(
            command, cwd=registry.ROOT, stdin=subprocess.DEVNULL, stdout=_fd(out),
            stderr=_fd(out), start_new_session=True,
        )  # fmt: skip
        return _wait(child.pid, limit, report, child, cancel)
    with warnings.catch_warnings():
        # Python 3.12+ warns on fork in a process with threads: importing torch starts an idle
        # helper thread, which the child never touches, and the parent initialised nothing.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns
        code = GRADER_FAILED
        try:
            os.setpgid(0, 0)  # its own process group, so it can be stopped with all it started
            signal.signal(signal.SIGINT, signal.default_int_handler)
            _redirect(out)
            code = child_main(request, scratch)
        except BaseException as e:  # the grader's own failure: the parent reports it
            report.with_suffix(".crash").write_text(processes.where(e))
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    with contextlib.suppress(OSError):  # also here, so a kill at once reaches the whole group
        os.setpgid(pid, pid)
    return _wait(pid, limit, report, cancel=cancel)


def _fd(out: TextIO) -> int | None:
    return None if out in (sys.stdout, sys.stderr) else out.fileno()


def _redirect(out: TextIO) -> None:
    """The learner's code reads no keystrokes (watch mode reads them); output goes to `out`."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    if out not in (sys.stdout, sys.stderr):
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)


def _wait(
    pid: int,
    limit: float,
    report: Path,
    process: subprocess.Popen | None = None,
    cancel: Callable[[], bool] | None = None,
) -> int | Stalled | Cancelled:
    progress, seen, polls = time.monotonic(), 0.0, 0
    exited = _pidfd(pid)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                if process is not None:
                    process.returncode = os.waitstatus_to_exitcode(status)
                return os.waitstatus_to_exitcode(status)
            polls += 1
            # A grading whose report is complete is let finish: its verdict is already out.
            if cancel is not None and polls % 10 == 0 and cancel() and not _finished(report):
                _kill(pid)
                return Cancelled()
            if polls % 50 == 0:  # twice a second: has a check finished since?
                with contextlib.suppress(OSError):
                    if (mtime := report.stat().st_mtime) != seen:
                        progress, seen = time.monotonic(), mtime
                if time.monotonic() - progress > limit:
                    from norm_katas.runtime.limits import dump_stack

                    frames = dump_stack(pid, report.with_suffix(".stack"))
                    _kill(pid)
                    return Stalled(limit, frames)
            if exited is None:
                time.sleep(0.01)
            else:  # the poll, cut short when the child exits: each verdict half a poll sooner
                select.select([exited], [], [], 0.01)
    except BaseException:  # Ctrl-C in watch mode: the child goes with the parent
        _kill(pid)
        raise
    finally:
        if exited is not None:
            os.close(exited)


def _pidfd(pid: int) -> int | None:
    """A file descriptor that becomes readable when the child `pid` exits (Linux 5.3 on)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _finished(report: Path) -> bool:
    try:
        return bool(json.loads(report.read_text()).get("finished"))
    except (OSError, ValueError):  # not written yet, or being written
        return False


def _kill(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
