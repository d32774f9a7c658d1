"""Self-tests for the doors a learner grades through (nox -s kata-<name> and
python -m norm_katas): --help lists the options, a mistyped kata, session or option gets the closest
name and exit 2 whichever door it came through, and nothing is misread or recorded wrongly."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from norm_katas.content import registry
from norm_katas.engine import options, runner
from norm_katas.practice import history

NOX = shutil.which("nox")


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own history, never the user's."""
    path = tmp_path / "data"
    monkeypatch.setenv("NORM_KATAS_DATA", str(path))
    return path


def run(*args: str, cwd: Path = registry.ROOT) -> subprocess.CompletedProcess[str]:
    """`python -m <args>` in a fresh interpreter, as a learner runs it."""
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


GRADE_DOORS = [("norm_katas", "grade")]


@pytest.mark.parametrize("door", GRADE_DOORS, ids=" ".join)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_the_grading_options_and_grades_nothing(
    door: tuple[str, str], flag: str
) -> None:
    done = run(*door, "layernorm", flag)
    assert done.returncode == 0, done.stderr
    for option in options.ALL:
        if option.shown:
            assert option.flags[-1] in done.stdout, option.flags
    assert "--strict-parity" not in done.stdout and "--checklist" not in done.stdout
    assert "Interview core" not in done.stdout + done.stderr  # nothing was graded


def test_help_without_a_kata_and_for_the_commands() -> None:
    for args in [("norm_katas", "grade", "--help"), ("norm_katas", "--help"), ("norm_katas", "-h")]:
        done = run(*args)
        assert done.returncode == 0 and "usage" in done.stdout, (args, done.stderr)


COMMANDS = [
    "grade",
    "watch",
    "list",
    "init",
    "mock",
    "progress",
    "today",
    "reset",
    "solution",
    "stubs",
]
COMMANDS += ["notebooks", "new-kata", "serve"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_answers_help_with_its_own_help(command: str) -> None:
    """`solution --help` is not a kata named --help, nor `list --help` the list."""
    done = run("norm_katas", command, "--help")
    assert done.returncode == 0, done.stdout + done.stderr
    usage = done.stdout.splitlines()[0]
    assert usage.startswith("usage:") and re.search(rf"\b{command}\b", usage), done.stdout
    assert "no kata named" not in done.stderr and "layernorm " not in done.stdout


@pytest.mark.parametrize(("typed", "says"), [("lsit", "; did you mean 'list'?"), ("frob", "")])
def test_an_unknown_command_is_named_with_the_closest_and_the_usage(typed: str, says: str) -> None:
    done = run("norm_katas", typed)
    assert done.returncode == runner.USAGE, done.stdout + done.stderr
    assert done.stderr.startswith(f"unknown command {typed!r}{says}\nusage:"), done.stderr


def test_a_reader_that_goes_away_gets_no_traceback() -> None:
    """`norm-katas list | head -1`: the pipe closes early, and the command stops quietly."""
    child = subprocess.Popen(
        [sys.executable, "-m", "norm_katas", "list"], cwd=registry.ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # before the command writes a line: every write hits a closed pipe
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 141 and "Traceback" not in err, err


def test_every_option_in_the_docs_is_known_and_listed() -> None:
    page = (registry.ROOT / "docs" / "grading.md").read_text()
    section = page.split("## The options", 1)[1].split("\n## ", 1)[0]
    used = set(re.findall(r"nox -s kata-\w+ -- (-{1,2}[\w-]+)", section))
    assert {"--impl", "--hints", "-k", "--timeout"} <= used
    shown = options.help_text("x")
    for flag in used:
        assert flag in options.BY_FLAG and flag in shown, flag


DOORS_FOR_A_KATA = [
    ("norm_katas", "grade", "layernrom"),
    ("norm_katas", "reset", "layernrom"),
    ("norm_katas", "solution", "layernrom"),
    ("norm_katas", "mock", "--kata", "layernrom"),
]


@pytest.mark.parametrize("args", DOORS_FOR_A_KATA, ids=" ".join)
def test_a_mistyped_kata_gets_the_closest_name(args: tuple[str, ...]) -> None:
    done = run(*args)
    assert done.returncode == runner.USAGE, done.stderr
    assert "no kata named 'layernrom'; did you mean 'layernorm'?" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("door", GRADE_DOORS, ids=" ".join)
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--hint"], "unknown option '--hint'; did you mean --hints?"),
        (["--timeout", "abc"], "--timeout abc: expected a number"),
        (["--timeout", "-1"], "--timeout -1: expected a positive number"),  # not "needs a value"
        (["--impl"], "--impl needs a value"),
        (["--impl", "solutions", "--timeout-method", "thred"], "expected one of signal, thread"),
        (["solutions"], "unexpected argument 'solutions'"),
    ],
)
def test_a_mistyped_option_is_answered_before_grading(
    door: tuple[str, str], args: list[str], says: str
) -> None:
    done = run(*door, "layernorm", *args)
    assert done.returncode == runner.USAGE, done.stderr
    assert says in done.stderr and "--help" in done.stderr, done.stderr
    assert "pytest" not in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("missing/out.json", "missing does not exist; create it first"),
        (".", "is a folder; name a file in it"),
    ],
)
def test_a_report_json_that_cannot_be_written_is_answered_before_grading(
    tmp_path: Path, where: str, says: str
) -> None:
    """Not a verdict, then a traceback: the path is checked at the door, nothing is graded."""
    done = run("norm_katas", "grade", "layernorm", "--report-json", str(tmp_path / where))
    assert done.returncode == runner.USAGE, done.stdout + done.stderr
    assert says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "Interview core" not in done.stdout + done.stderr
    assert history.events("layernorm") == []


@pytest.mark.parametrize(
    "args",
    [
        ["-xs", "-q", "-vv", "--hints", "2", "--all", "--strict", "--perf"],
        ["--hints", "--impl=solutions", "-kaffine", "-m", "parity", "--timeout=0.5"],
        ["--maxfail", "2", "--timeout-method", "thread", "--device", "cuda", "--report-json=o"],
    ],
)
def test_the_options_a_learner_uses_are_accepted(args: list[str]) -> None:
    assert options.problem(args) is None


@pytest.mark.parametrize("value", ["0", "-2.5", "nan", "inf"])
def test_every_check_keeps_a_time_limit(value: str) -> None:
    """--timeout takes positive CPU seconds: pytest-timeout's 0 (no limit) would leave code
    that loops forever running until the whole grading's limit, minutes later."""
    for args in (["--timeout", value], [f"--timeout={value}"]):
        said = options.problem(args) or ""
        assert said.startswith(f"--timeout {value}: expected a positive number"), said


def test_a_selection_that_matches_no_check_is_a_usage_error_and_no_attempt(
    tmp_path: Path,
) -> None:
    mine = tmp_path / "layernorm.py"
    shutil.copyfile(registry.get("layernorm").solution, mine)
    done = run("norm_katas", "grade", "layernorm", "--impl", str(mine), "-k", "xyzzy")
    assert done.returncode == runner.USAGE, done.stdout + done.stderr
    assert "No check matched -k xyzzy" in done.stderr, done.stderr
    assert "-k picks the checks whose name or checklist line holds a word" in done.stderr
    assert "could not record" not in done.stderr, done.stderr
    assert history.events("layernorm") == []


def test_a_selection_pytest_cannot_read_is_said_so_not_as_no_match(grade) -> None:
    # An unclosed parenthesis, a dangling "and": pytest's own message says where; the
    # grader's line must not then claim that no check matched.
    for flag, expression in (("-k", "("), ("-m", "parity and")):
        _, output, code = grade("layernorm", "solutions", flag, expression)
        assert code == runner.USAGE, output
        assert f"Wrong expression passed to '{flag}'" in output, output
        shown = f"{flag} {shlex.quote(expression)}"  # as a shell would take it back
        assert f"{shown} is not an expression pytest can read" in output, output
        assert "No check matched" not in output, output
    _, output, code = grade("layernorm", "solutions", "-m", "xyzzy")
    assert code == runner.USAGE and "No check matched -m xyzzy" in output, output
    assert "-m the checks with a marker (-m parity" in output, output


def test_k_picks_checks_by_the_line_the_learner_reads(grade) -> None:
    """The checklist reads "runs on CUDA ..."; no check function is named for cuda."""
    report, output, code = grade("batchnorm", "solutions", "-k", "cuda")
    # "(simulated)" is said at run time, on the CPU: -k matches the suite's own line.
    assert code == runner.SOLVED and re.search(r"✓ runs on (\(simulated\) )?CUDA", output), output
    ran = [c for c in report["checks"] if c["outcome"] == "passed"]
    assert [c["name"] for c in ran] == ["test_follows_device"], ran


def test_ctrl_c_during_a_grading_exits_130_and_records_nothing() -> None:
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(
        sys.executable, ["-m", "norm_katas", "grade", "layernorm", "--impl", "solutions"],
        cwd=str(registry.ROOT), encoding="utf-8", timeout=300,
    )  # fmt: skip
    child.expect("LayerNorm")  # the checklist has begun: the grading is under way
    child.sendintr()
    child.expect("The grading was interrupted \\(Ctrl-C\\): no verdict, nothing recorded.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130, child.before
    assert "Traceback" not in child.before and history.events("layernorm") == []


def test_ctrl_c_before_a_grading_begins_says_so_and_exits_130(
    warm_up_interrupted: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ctrl-C while torch and the checks are imported, before any grading: said, never silent.
    from norm_katas.doors import cli

    assert cli.main(["grade", "layernorm", "--impl", "solutions"]) == 130
    said = capsys.readouterr().err
    assert "Interrupted (Ctrl-C) before the grading began: no verdict, nothing recorded." in said
    assert history.events("layernorm") == []


def test_the_help_and_install_advice_name_the_door_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a clone, nox; installed, norm-katas and pip (no nox, no katas/); in a notebook, %pip
    and no --impl (the cell is the file)."""
    from norm_katas.engine import suggest

    assert "katas/<kata>.py (default)" in options.help_text("x")
    assert "`nox -s kata-triton-rmsnorm` installs it" in suggest.install(
        "triton", "triton-rmsnorm", ""
    )
    assert "--impl" not in options.help_text("%%kata layernorm", suggest.NOTEBOOK)
    assert "%pip install 'triton'" in suggest.install(
        "triton", "triton-rmsnorm", "py", suggest.NOTEBOOK
    )
    monkeypatch.setattr(registry, "INSTALLED", True)
    shown = options.help_text("norm-katas grade <kata>")
    assert "katas/" not in shown and "your workspace's <kata>.py (default" in shown, shown
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "triton" else find_spec(name, *a),
    )
    said = runner.missing_requirements(registry.get("triton-rmsnorm"))
    assert said is not None and "nox -s" not in said, said
    assert f"{sys.executable} -m pip install 'triton" in said, said


def test_a_missing_pytest_timeout_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "pytest_timeout" else find_spec(name, *a),
    )
    with pytest.raises(runner.GraderError, match=r"pytest-timeout is not installed") as e:
        runner.warm_up([])
    assert "-m pip install 'pytest-timeout>=2.3'" in str(e.value)


# -- nox ----------------------------------------------------------------------------------


def nox(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """nox, from `cwd`; from below the repository, with -f naming its noxfile (as the README)."""
    assert NOX is not None
    noxfile = [] if cwd == registry.ROOT else ["-f", str(registry.ROOT / "noxfile.py")]
    return subprocess.run(
        [NOX, *noxfile, *args], cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


@pytest.mark.skipif(NOX is None, reason="nox is not installed for this user")
@pytest.mark.parametrize("where", ["", "katas"], ids=["repository", "katas"])
def test_a_mistyped_session_gets_the_closest_name_from_nox(where: str) -> None:
    done = nox("-s", "kata-layernrom", cwd=registry.ROOT / where)
    assert done.returncode == runner.USAGE, done.stderr
    assert "did you mean kata-layernorm?" in done.stderr, done.stderr
    listed = nox("-l", cwd=registry.ROOT / where)  # and -f finds them from katas/
    assert listed.returncode == 0 and "kata-layernorm" in listed.stdout, listed.stderr


def _nox_python_has_torch() -> bool:
    assert NOX is not None
    shebang = Path(NOX).read_text(errors="replace").splitlines()[0].removeprefix("#!").split()
    probe = subprocess.run([*shebang, "-c", "import torch"], capture_output=True, timeout=300)
    return probe.returncode == 0


@pytest.mark.skipif(NOX is None, reason="nox is not installed for this user")
def test_system_torch_without_torch_beside_nox_says_what_to_do(tmp_path: Path) -> None:
    if _nox_python_has_torch():
        pytest.skip("the Python that runs nox has torch here")
    env = tmp_path / "env"
    done = nox(
        "-s", "kata-layernorm", cwd=registry.ROOT, NORM_KATAS_ENV=str(env),
        NORM_KATAS_TORCH="system",
    )  # fmt: skip
    assert done.returncode == runner.GRADER_FAILED, done.stderr
    assert "has none" in done.stderr and "unset NORM_KATAS_TORCH" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not any(tmp_path.iterdir())


@pytest.mark.skipif(NOX is None, reason="nox is not installed for this user")
@pytest.mark.parametrize("where", ["", "katas"], ids=["repository", "katas"])
def test_nox_answers_help_and_a_mistyped_option_without_building_anything(
    where: str, tmp_path: Path
) -> None:
    env = str(tmp_path / "env")  # none yet: answering must not build one (GBs the first time)
    done = nox(
        "-s", "kata-layernorm", "--", "--help", cwd=registry.ROOT / where, NORM_KATAS_ENV=env
    )
    assert done.returncode == 0 and "nox -s kata-layernorm -- [options]" in done.stdout
    done = nox(
        "-s", "kata-layernorm", "--", "--hint", cwd=registry.ROOT / where, NORM_KATAS_ENV=env
    )
    assert done.returncode == runner.USAGE and "did you mean --hints?" in done.stderr
    assert not any(tmp_path.iterdir()), "an environment was built"


NO_CUDA = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or __import__("torch").cuda.is_available(),
    reason="needs a machine without a CUDA device",
)


@NO_CUDA
def test_device_cuda_without_a_gpu_says_where_the_triton_kernel_ran(grade) -> None:
    _, output, code = grade("triton-rmsnorm", "solutions", "--device", "cuda")
    assert code == 0, output
    assert "Triton's interpreter" in output, output
    assert "FakeTensorMode" not in output and "(on a GPU: --device cuda)" not in output, output


@NO_CUDA
def test_self_tests_asked_for_cuda_without_a_gpu_say_they_ran_on_the_cpu() -> None:
    test = "tests/selftest/test_stubs.py::test_every_stub_is_as_recorded"
    command = [sys.executable, "-m", "pytest", test, "--device", "cuda", "-n", "0", "-q"]
    result = subprocess.run(command, cwd=registry.ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "--device cuda: No CUDA device here" in result.stdout, result.stdout


def test_a_mock_installs_only_what_its_kata_needs() -> None:
    """`nox -s mock -- --kata dropout` installs no Triton; a Triton kata's mock, and a mock that
    may pick any kata, install it."""
    nox_python = os.environ.get("NORM_KATAS_NOX")
    if nox_python is None:
        pytest.skip("needs nox: `nox -s tests` names the Python that runs it (NORM_KATAS_NOX)")
    script = (
        "import sys, noxfile\n"
        "for args in (['--kata', 'dropout'], ['--kata=triton-rmsnorm', '--minutes', '5'], [],"
        " ['--kata', 'nonesuch']):\n"
        "    print(noxfile.mock_extras(args))\n"
    )
    run = subprocess.run(
        [nox_python, "-c", script], cwd=registry.ROOT, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stdout + run.stderr
    dropout, triton, any_kata, unknown = run.stdout.splitlines()
    assert dropout == "()" and unknown == "()", run.stdout
    assert "triton" in triton and "triton" in any_kata, run.stdout


def test_the_usage_lists_every_command_on_its_own_line(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m norm_katas --help`: the learner's commands, then the authors', a line each."""
    from norm_katas.__main__ import COMMANDS, main

    assert main(["--help"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert all(line.startswith("python -m norm_katas ") for line in lines if line), lines
    named = {line.split()[3] for line in lines if line}
    assert named == {name for name in COMMANDS if not name.startswith("_")}, named
