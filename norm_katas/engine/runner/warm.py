"""Warming up: everything a grading needs imported into this process once, so that each
child forked from it starts with it (warm_up), or, for a process that is the learner's own,
what can be imported without changing it (preload).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import os
import sys

from norm_katas.content import registry
from norm_katas.engine import suggest
from norm_katas.engine.runner.child import prepare_pytest
from norm_katas.engine.runner.parent import GraderError, grader_failed
from norm_katas.runtime import processes

# What every grading imports besides torch: pytest, its timeout plugin and the grader.
GRADING_MODULES = (
    "pytest", "pytest_timeout", "norm_katas.checks", "norm_katas.runtime.fake_cuda",
    "norm_katas.engine.plugin",
)  # fmt: skip


# Whether warm_up ran in this process: it is then the grader's own (a command, watch mode, a
# mock, the grading server), never the learner's (a notebook's kernel preloads instead), and may
# set up what its children share (the test-writing mode's Triton engine, engine.proving).
WARMED = [False]


def warm_up(
    katas: list[registry.Kata], *, long_lived: bool = False, device: str | None = None
) -> None:
    """Import everything a grading needs into this process, or raise GraderError.

    long_lived: this process will grade many times (watch mode, a mock, the self-tests), so
    also import what each child would otherwise import again on first use (pytest's plugins,
    torch's symbolic shapes).
    torch._dynamo is not among them: it is deferred in every process (torch_compat.defer_dynamo),
    as torch's reference implementations on the meta device ask it only for `disable`. Of 608
    catalogue gradings 6 needed more of it (FakeTensorMode, where meta cannot run the code) and
    imported it in their child; importing it here cost every watch mode, mock and grading
    server a second and more at start.
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
        torch_compat.defer_dynamo()  # torch._dynamo only if something needs more than disable
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
        _reraise_interrupt(e)
        raise GraderError(grader_failed(processes.cause(e), processes.where(e))) from None
    suites = str(registry.ROOT / "tests")
    if suites not in sys.path:
        sys.path.insert(0, suites)  # as pytest's default import mode does for tests/test_*.py
    for kata in katas:
        try:
            importlib.import_module(kata.suite.stem)
        except Exception as e:
            _reraise_interrupt(e)
            raise GraderError(
                grader_failed(
                    f"the checks of {kata.name} do not load: {processes.cause(e)}",
                    processes.where(e),
                )
            ) from None
    if long_lived:
        _import_what_children_use(katas)
        prepare_pytest()
        if device is not None and any(kata.triton for kata in katas):
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
    WARMED[0] = True


def _reraise_interrupt(error: BaseException) -> None:
    """A Ctrl-C that landed in a C extension's initialisation comes out as another error
    (SystemError: "initialization of ... raised unreported exception") caused by it: the
    learner stopped the start, which is no failure of the grader's."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            raise KeyboardInterrupt from None
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__


def _import_what_children_use(katas: list[registry.Kata]) -> None:
    """Import here, once, what every grading's child would import on first use, so that each
    child finds it in sys.modules (a few percent of a short grading: nox -s mutants and the
    self-tests grade thousands). Each is optional: a child imports what is missing itself."""
    # pytest imports its built-in plugins (and through them pdb, xml.etree, ...) in every
    # pytest.main, and some modules on first use (pdb for --pdb's plugin, ...).
    from _pytest.config import default_plugins

    names = [f"_pytest.{name}" for name in default_plugins]
    names += ["pdb", "_pytest._argcomplete", "encodings.unicode_escape"]
    # Autograd loads torch's symbolic shapes, and with them sympy, on the first backward with
    # a gradient given (a quarter of a second): every check of gradients. torch._dynamo would
    # bring it too, but costs four times as much and no grading needs it (defer_dynamo).
    names.append("torch.fx.experimental.symbolic_shapes")
    if any(kata.triton for kata in katas):
        # Triton's first kernel launch imports its gluon package (a tenth of a second),
        # whichever mode the kernel runs in.
        names.append("triton.experimental.gluon.nvidia.hopper")
    for name in names:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def preload(kata: registry.Kata) -> None:
    """Import into this process what each grading's child would otherwise import afresh:
    torch, pytest and the grader (a second or two a grading). Not torch._dynamo: the child
    defers it (child_main), as every grader does.

    For a process that grades now and then and is the learner's own, a notebook's kernel or a
    script calling norm_katas.check, so without warm_up's other effects: its objects stay
    collectable, its import path and environment stay as they are, and whatever fails to
    import is left for the grading's child to meet and report. The collector pauses while
    they import (as in cli.main), and is left as it was.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        for name in ("torch", *GRADING_MODULES):
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        with contextlib.suppress(Exception):
            _import_what_children_use([kata])
    finally:
        if collecting:
            gc.enable()
