"""nox sessions: `kata-<name>` grades a kata, `tests` proves the graders, `lint` runs ruff.

Every kata session and `tests` share one environment (.nox/grader) holding torch, built on
first use and reused while its stamp matches. Choose the torch build with environment
variables (see the README):
  NORM_KATAS_TORCH        requirement for torch (default "torch>=2.4"), or "system" to use
                          the torch already installed for the Python that runs nox
  NORM_KATAS_TORCH_INDEX  an index URL for torch only, e.g. PyTorch's CPU-only wheels
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import nox

sys.path.insert(0, str(Path(__file__).parent))
from grader import registry

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_venv = "yes"

ENV = Path(__file__).parent / ".nox" / "grader"
# torch 2.4 is the first release with nn.RMSNorm; the upper bound is the next major.
TORCH = os.environ.get("NORM_KATAS_TORCH", "torch>=2.4,<3")
TORCH_INDEX = os.environ.get("NORM_KATAS_TORCH_INDEX", "")
DEPS = ["numpy", "pytest>=8", "pytest-timeout>=2.3", "pytest-xdist>=3", "pexpect>=4.8"]
RUFF = "ruff==0.17.6"


def grader_python(session: nox.Session) -> str:
    """The shared environment's Python, created and filled on first use."""
    python = ENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    stamp = ENV / "norm-katas-stamp.json"
    wanted = {"torch": TORCH, "index": TORCH_INDEX, "deps": DEPS, "python": sys.version}
    have = json.loads(stamp.read_text()) if python.exists() and stamp.exists() else {}
    # Without an explicit choice, keep whichever torch the environment was built with.
    explicit = {"NORM_KATAS_TORCH", "NORM_KATAS_TORCH_INDEX"} & set(os.environ)
    keys = list(wanted) if explicit else ["deps", "python"]
    if have and all(have.get(k) == wanted[k] for k in keys):
        return str(python)
    use_system = TORCH == "system"
    session.log(f"Building the grading environment in {ENV} (once; torch: {TORCH})")
    venv = [sys.executable, "-m", "venv", "--clear", str(ENV)]
    session.run(*venv, *(["--system-site-packages"] if use_system else []), external=True)
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    if use_system:
        probe = "import torch; print('using torch', torch.__version__, 'from', torch.__file__)"
        session.run(str(python), "-c", probe, external=True)
    else:
        index = ["--index-url", TORCH_INDEX] if TORCH_INDEX else []
        session.run(*pip, TORCH, *index, external=True)
    session.run(*pip, *DEPS, external=True)
    stamp.write_text(json.dumps(wanted))
    return str(python)


def _kata_session(kata: registry.Kata) -> None:
    def grade(session: nox.Session) -> None:
        python = grader_python(session)
        env = {"NORM_KATAS_INVOKED_FROM": str(session.invoked_from)}
        session.run(
            python, "-m", "grader", "grade", kata.name, *session.posargs, env=env, external=True
        )

    grade.__doc__ = f"{kata.title} ({kata.difficulty}, ~{kata.minutes} min)"
    nox.session(name=f"kata-{kata.name}", python=False)(grade)


for _kata in registry.load():
    _kata_session(_kata)


@nox.session(python=False)
def mock(session: nox.Session) -> None:
    """A timed mock interview on a fresh stub: -- [--kata NAME] [--minutes N]."""
    python = grader_python(session)
    session.run(python, "-m", "grader", "mock", *session.posargs, external=True)


@nox.session(python=False)
def progress(session: nox.Session) -> None:
    """Your attempts per kata, and which kata to practise next."""
    session.run(sys.executable, "-m", "grader", "progress", external=True)


@nox.session(python=False)
def reset(session: nox.Session) -> None:
    """Restore a stub (-- NAME, or -- --all); your file is backed up first."""
    session.run(sys.executable, "-m", "grader", "reset", *session.posargs, external=True)


@nox.session(python=False)
def solution(session: nox.Session) -> None:
    """Show a reference solution (-- NAME); the peek is recorded in your history."""
    session.run(sys.executable, "-m", "grader", "solution", *session.posargs, external=True)


@nox.session(python=False)
def tests(session: nox.Session) -> None:
    """Prove the graders: solutions pass; stubs, wrong and broken files fail cleanly."""
    python = grader_python(session)
    workers = [] if any(a.startswith("-n") for a in session.posargs) else ["-n", "auto"]
    session.run(python, "-m", "pytest", "tests/selftest", *workers, *session.posargs, external=True)


@nox.session
def lint(session: nox.Session) -> None:
    """Run ruff's linter and formatter check."""
    session.install(RUFF)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=False)
def benchmark(session: nox.Session) -> None:
    """Report how long a warm grading run takes, as a ratio to importing torch (no assertions)."""
    python = grader_python(session)

    def best_of(cmd: list[str], runs: int = 3) -> float:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            session.run(*cmd, external=True, silent=True, success_codes=[0, 1])
            times.append(time.perf_counter() - start)
        return min(times)

    # torch._dynamo loads on first use of dispatch modes and fake/meta tensors, which the
    # from-scratch, vectorized and device checks need: it is the floor of any grading.
    baseline = best_of([python, "-c", "import torch"])
    floor = best_of([python, "-c", "import torch, torch._dynamo"])
    session.log(f"import torch: {baseline:.2f} s; import torch, torch._dynamo: {floor:.2f} s")
    for kata in registry.load():
        seconds = best_of([python, "-m", "grader", "grade", kata.name, "--impl", "solutions"])
        session.log(
            f"kata-{kata.name:13} {seconds:5.2f} s = {seconds / baseline:4.1f}x import torch, "
            f"{seconds / floor:4.2f}x import torch + torch._dynamo"
        )
