"""Self-test for the grading environment's build (noxfile.py): a rebuild is made beside the
environment in use and takes its place only once complete, so a failed one leaves it grading.

The build is made to fail fast, with a torch release that does not exist, and the old
environment is a venv that sees this interpreter's packages through a .pth file: seconds,
where a real build downloads torch for minutes. It needs nox, as a learner runs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from packaging.tags import sys_tags

from norm_katas.content import registry

NOX = shutil.which("nox")
pytestmark = pytest.mark.skipif(NOX is None, reason="nox is not installed for this user")


def nox_layernorm(
    env: Path, data: Path, pip: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`nox -s kata-layernorm -- --impl solutions`, with the environment at `env` to be built
    for a torch that no index has, `pip` its PIP_* variables. Each check may take two minutes:
    a cold grading on a busy machine is slow, and this test is about the environment, not the
    clock."""
    assert NOX is not None
    variables = {"NORM_KATAS_ENV": str(env), "NORM_KATAS_TORCH": "torch==0.0.0", **(pip or {})}
    return subprocess.run(
        [NOX, "-f", str(registry.ROOT / "noxfile.py"), "-s", "kata-layernorm", "--", "--impl",
         "solutions", "--timeout", "120"],
        env={**os.environ, **variables, "NORM_KATAS_DATA": str(data)},
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_a_failed_build_leaves_nothing_and_keeps_the_old_environment(tmp_path: Path) -> None:
    envs = tmp_path / "envs"
    env = envs / "grader"
    # The first build fails: the session says so, and leaves nothing half-built behind. pip
    # finds that torch in a folder of its configuration (an empty file: no wheel), and the
    # session says where it installs from, not "from PyPI".
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    tag = next(iter(sys_tags()))  # this Python's and this platform's, as nox's Python has
    wheel = wheels / f"torch-0.0.0+cpu-{tag.interpreter}-{tag.abi}-{tag.platform}.whl"
    wheel.touch()
    run = nox_layernorm(env, tmp_path / "data", {"PIP_FIND_LINKS": str(wheels)})
    output = run.stdout + run.stderr
    assert f"Installing torch==0.0.0 from {wheel}, in the find-links folder" in output, output
    assert "from PyPI" not in output, output
    assert run.returncode == 3, output  # the grader's failure, never 1 ("not solved yet")
    assert "Building the grading environment failed" in output, output
    assert "Nothing is left behind" in output, output
    assert not envs.exists() or not any(envs.iterdir())

    # An environment that grades, built for another torch: a rebuild is due, and fails.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run([python, "-c", where], capture_output=True, text=True, check=True)
    Path(purelib.stdout.strip(), "selftest.pth").write_text(sysconfig.get_paths()["purelib"])
    stamp = env / "norm-katas-stamp.json"
    stamp.write_text(json.dumps({"torch": "torch==2.4.1"}))
    run = nox_layernorm(env, tmp_path / "data")
    output = run.stdout + run.stderr
    assert "Building the grading environment failed" in output, output
    assert f"The environment you had is kept, unchanged, and grades this run: {env}" in output
    assert run.returncode == 0 and re.search(r"Interview core (\d+)/\1 ✓ solved", output), output
    assert sorted(p.name for p in envs.iterdir()) == ["grader"]  # no half-built one beside it
    assert json.loads(stamp.read_text()) == {"torch": "torch==2.4.1"}
