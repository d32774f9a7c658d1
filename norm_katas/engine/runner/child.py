"""What runs in a grading's child: the kata's suite under pytest, set up for grading (only the
plugins it needs, the learner's code in a scratch folder, one CPU thread), from a start that a
long-lived parent built once (prepare_pytest).
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from norm_katas.content import registry

if TYPE_CHECKING:
    from collections.abc import Iterator

    from norm_katas.engine.request import Request

UNUSED_PYTEST_PLUGINS = (
    "doctest", "junitxml", "pastebin", "setuponly", "setupplan", "stepwise", "legacypath",
    "tmpdir", "recwarn", "unittest", "subtests",
)  # fmt: skip
# The plugins a grading's pytest runs without: -p no:NAME, before any other option.
PYTEST_NO_PLUGINS = ("-p", "no:logging", *(f"-pno:{name}" for name in UNUSED_PYTEST_PLUGINS))
# What pytest.main builds first in every grading, built once by a long-lived process (see
# prepare_pytest), or None. This process never uses it: each child starts from its own copy.
_PREPARED: Any = None


def prepare_pytest() -> None:
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
    # torch._dynamo only if something needs more of it than `disable` (a notebook's kernel,
    # the learner's own process, did not defer it: runner.preload).
    from norm_katas.runtime import torch_compat

    torch_compat.defer_dynamo()
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
