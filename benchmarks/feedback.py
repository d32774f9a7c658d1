"""Measure the feedback loop (`nox -s benchmark`): every figure as seconds and as a ratio to
`import torch`, measured in the same run on the same machine. It reports; it never fails.

    python -m benchmarks.feedback [--quick] [--runs N] [--katas NAME ...]

--quick skips timing the whole self-test suite (a few minutes on 2 cores). Watch mode is timed
on every kata (--katas: on these), saving the kata's reference solution as the learner's file:
every check runs, as on the save that solves it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from norm_katas.content import registry  # noqa: E402

KATA = "layernorm"
VERDICT = r"Interview core \d+/\d+"
TESTS_VERDICT = r"Your tests catch \d+ of \d+"  # the test-writing mode's headline
# Saved as the learner's file in watch mode and the mock, so it must be self-contained (a file
# that imports solutions/ is refused outside the catalogue); a self-test grades it that way.
WRONG = ROOT / "tests" / "catalogue" / KATA / "eps_outside_sqrt.py"


def timed(run: Callable[[], object], runs: int) -> float:
    """The best of `runs`: the least disturbed by whatever else the machine does."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def command(*cmd: str, env: dict[str, str] | None = None) -> Callable[[], object]:
    def run() -> object:
        return subprocess.run(
            cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    return run


def save_to_verdict(
    args: list[str], path: Path, text: str, runs: int, data: Path, verdict: str = VERDICT
) -> float:
    """Seconds from saving `path` to the verdict (the regex `verdict`) on screen, in a
    pseudo-terminal."""
    import pexpect

    env = {**os.environ, "NORM_KATAS_DATA": str(data), "NO_COLOR": "1"}
    child = pexpect.spawn(
        sys.executable, ["-m", "norm_katas", *args], cwd=str(ROOT), env=env,
        encoding="utf-8", timeout=120, dimensions=(50, 160),
    )  # fmt: skip
    times = []
    try:
        if "mock" in args:
            child.expect(r"implement the classes in\s+(\S+\.py)")
            path = Path(child.match.group(1))
            child.expect("left")
        else:
            child.expect(verdict)  # watch mode grades once at start
            child.expect("Watching")
        for i in range(runs):
            time.sleep(1.1)  # a visibly newer mtime on every filesystem
            start = time.perf_counter()
            path.write_text(text + f"\n# save {i}\n")
            child.expect(verdict)
            times.append(time.perf_counter() - start)
    finally:
        child.sendcontrol("c")
        child.close(force=True)
    return min(times)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="skip timing the self-tests")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the best counts)")
    parser.add_argument(
        "--katas", nargs="+", metavar="NAME", help="time watch mode on these katas (default: all)"
    )
    args = parser.parse_args(argv)
    watched = [registry.get(name) for name in args.katas] if args.katas else registry.load()
    kata = registry.get(KATA)
    nox = os.environ.get("NORM_KATAS_NOX")  # the Python that runs nox, set by the session
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        env = {**os.environ, "NORM_KATAS_DATA": str(data)}
        wrong = WRONG
        rows: list[tuple[str, float, str]] = []
        base = timed(command(sys.executable, "-c", "import torch"), args.runs)
        rows.append(("import torch", base, ""))
        grade = [sys.executable, "-m", "norm_katas", "grade", KATA, "--impl", "solutions"]
        seconds = timed(command(*grade, env=env), args.runs)
        rows.append(("one grading, python -m norm_katas grade", seconds, ""))
        if nox:
            session = [nox, "-m", "nox", "-s", f"kata-{KATA}", "--", "--impl", "solutions"]
            seconds = timed(command(*session, env=env), args.runs)
            rows.append((f"one nox -s kata-{KATA}", seconds, "≤ 2.0× import torch"))
        mine = Path(tmp) / kata.file
        shutil.copyfile(wrong, mine)
        watch = ["grade", KATA, "--watch", "--impl", str(mine)]
        seconds = save_to_verdict(watch, mine, wrong.read_text(), args.runs, data)
        rows.append((f"save → verdict, watch mode, {KATA} wrong", seconds, "≤ 0.5 s"))
        for each in watched:
            solution = each.solution.read_text(encoding="utf-8")
            mine = Path(tmp) / each.file
            mine.write_text(solution, encoding="utf-8")
            watch = ["grade", each.name, "--watch", "--impl", str(mine)]
            seconds = save_to_verdict(watch, mine, solution, args.runs, data)
            rows.append((f"save → verdict, watch mode, {each.name} solved", seconds, "≤ 0.5 s"))
        for each in watched:  # the test-writing mode: the reference tests against every layer
            if not each.tests_solution.exists():
                continue
            reference = each.tests_solution.read_text(encoding="utf-8")
            mine = Path(tmp) / "tests" / f"test_{each.stem}.py"
            mine.parent.mkdir(exist_ok=True)
            mine.write_text(reference, encoding="utf-8")
            watch = ["grade", each.name, "--tests", "--watch", "--impl", str(mine)]
            seconds = save_to_verdict(watch, mine, reference, args.runs, data, TESTS_VERDICT)
            goal = "" if each.triton else "≤ 10 s"
            rows.append((f"save → verdict, --tests watch mode, {each.name}", seconds, goal))
        mine = Path(tmp) / kata.file
        shutil.copyfile(wrong, mine)
        mock = ["mock", "--kata", KATA, "--minutes", "30"]
        seconds = save_to_verdict(mock, mine, wrong.read_text(), args.runs, data)
        rows.append(("save → verdict, nox -s mock", seconds, "≤ 1.0 s"))
        if not args.quick:
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
            workers = str(cores or os.cpu_count() or 1)  # as nox -s tests runs them
            tests = [sys.executable, "-m", "pytest", "tests/selftest", "-q", "-n", workers]
            tests += ["--dist", "worksteal"]
            seconds = timed(command(*tests, env=env), 1)
            rows.append(("the self-tests (nox -s tests)", seconds, "≤ 180 s"))
    print(f"\n{'what':56} {'seconds':>8} {'× import torch':>15}   goal")
    for what, seconds, goal in rows:
        print(f"{what:56} {seconds:8.2f} {seconds / base:15.2f}   {goal}")
    once = "" if args.quick else " (the self-tests: one)"
    print(f"\n{os.cpu_count()} cores; the best of {args.runs} runs per figure{once}.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
