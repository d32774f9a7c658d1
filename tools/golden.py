"""A golden run: every verdict the graders give, recorded, so that a change meant to keep
behaviour (a restructuring) can prove that it did.

    python tools/golden.py record before.json              # this checkout
    python tools/golden.py record before.json --root DIR   # another checkout (a git worktree)
    python tools/golden.py compare before.json after.json

`record` grades, through warm graders as the self-tests do, every reference solution, every
pristine stub and every file of tests/catalogue/<kata>/ (wrong, ok_, broken and
uses_reference files graded as the kata they name), and writes for each its exit status,
verdict (solved, strict_solved), headline and checklist (each check's name, tier and outcome),
and the transcript a learner reads. `compare` prints every difference and exits 1 if there is
one. Run it with the grading environment's Python (.nox/grader/bin/python); `record` takes a
few minutes on two cores.

Paths in the transcripts are the same in both runs when both are recorded from checkouts whose
files sit at the same relative paths: the graded files are named relative to the checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _engine():  # -> (registry, server, Request), in this checkout's layout or the older one
    try:
        from norm_katas.content import registry
        from norm_katas.engine import server
        from norm_katas.engine.request import Request
    except ImportError:  # before the restructuring: one flat grader package
        from norm_katas.grader import registry, server  # type: ignore[no-redef]
        from norm_katas.grader.request import Request  # type: ignore[no-redef]
    return registry, server, Request


def _work(root: Path) -> list[tuple[str, str, str]]:
    """(key, kata, path relative to root) for every file to grade."""
    registry, _, _ = _engine()
    katas = registry.load()
    by_stem = {Path(k.file).stem: k.name for k in katas}
    work: list[tuple[str, str, str]] = []
    for kata in katas:
        work.append((f"solution/{kata.name}", kata.name, "solutions"))
        work.append((f"stub/{kata.name}", kata.name, f"stubs/{kata.file}"))
    catalogue = root / "tests" / "catalogue"
    # hangs/ and writes/ are left out: they prove the grader's limits from copies of the tree
    folders = [*(catalogue / stem for stem in by_stem), catalogue / "broken"]
    for folder in [*folders, catalogue / "uses_reference"]:
        for path in sorted(folder.glob("*.py")):
            kata = by_stem.get(folder.name, "layernorm")  # broken files are LayerNorms
            rel = path.relative_to(root).as_posix()
            work.append((rel, kata, rel))
    return work


def _grade_all(root: Path, workers: int, keys: set[str] | None = None) -> dict[str, dict]:
    """Each file's grading, by key; only those in `keys` where given."""
    registry, server, Request = _engine()
    tmp = Path(tempfile.mkdtemp(prefix="golden-"))
    env = {
        **os.environ, "NORM_KATAS_DATA": str(tmp / "data"), "NORM_KATAS_PERF_BUDGET_S": "0",
        "NORM_KATAS_INVOKED_FROM": str(root), "OMP_NUM_THREADS": "1",
    }  # fmt: skip
    todo = [w for w in _work(root) if keys is None or w[0] in keys]
    todo.reverse()
    results: dict[str, dict] = {}
    lock = threading.Lock()

    def work(n: int) -> None:
        client = server.Client(env=env, device="cpu")
        if client.error:
            raise SystemExit(f"the grading server could not start:\n{client.error}")
        try:
            while True:
                with lock:
                    if not todo:
                        return
                    key, kata, rel = todo.pop()
                report, out = tmp / f"{n}-{len(todo)}.json", tmp / f"{n}-{len(todo)}.txt"
                args = ["--impl", rel, f"--report-json={report}", "--device", "cpu"]
                code = client.grade(Request.parse(registry.get(kata), args), out)
                data = json.loads(report.read_text()) if report.exists() else {}
                results[key] = {
                    "kata": kata,
                    "code": code,
                    "solved": data.get("solved"),
                    "strict_solved": data.get("strict_solved"),
                    "headline": data.get("headline"),
                    "checks": [
                        [c["name"], c.get("tier"), c["outcome"]] for c in data.get("checks", [])
                    ],
                    "transcript": _steady(out.read_text() if out.exists() else ""),
                }
        finally:
            client.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    shutil.rmtree(tmp, ignore_errors=True)
    return dict(sorted(results.items()))


def _steady(text: str) -> str:
    """The transcript without what differs from run to run: timings and temporary paths."""
    text = re.sub(r"\b\d+(\.\d+)? ?(s|ms)\b", "<time>", text)
    return re.sub(r"/tmp/[\w./-]+", "<tmp>", text)


def record(out: Path, root: Path, workers: int, here: bool = False) -> int:
    if not here and root.resolve() != HERE:  # grade with that checkout's own code, there
        env = {**os.environ, "PYTHONPATH": str(root)}
        cmd = [sys.executable, str(Path(__file__).resolve()), "record", str(out.resolve())]
        cmd += ["--root", str(root), "--workers", str(workers), "--here"]
        return subprocess.call(cmd, cwd=root, env=env)
    results = _grade_all(root, workers)
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"recorded {len(results)} gradings in {out}")
    return 0


def compare(before: Path, after: Path) -> int:
    old = json.loads(before.read_text(encoding="utf-8"))
    new = json.loads(after.read_text(encoding="utf-8"))
    problems = [f"only in {before.name}: {k}" for k in sorted(old.keys() - new.keys())]
    problems += [f"only in {after.name}: {k}" for k in sorted(new.keys() - old.keys())]
    for key in sorted(old.keys() & new.keys()):
        for field in ("code", "solved", "strict_solved", "headline", "checks", "transcript"):
            if old[key][field] != new[key][field]:
                problems.append(
                    f"{key}: {field} differs\n  before: {old[key][field]!r}\n"
                    f"  after:  {new[key][field]!r}"
                )
    for line in problems:
        print(line)
    same = len(old.keys() & new.keys())
    verdict = f"{len(problems)} differences" if problems else "the same"
    print(f"{same} gradings compared: {verdict}")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="grade every file and write the verdicts to OUT")
    rec.add_argument("out", type=Path)
    rec.add_argument("--root", type=Path, default=HERE, help="the checkout to grade with")
    rec.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2)))
    rec.add_argument("--here", action="store_true", help=argparse.SUPPRESS)
    cmp = sub.add_parser("compare", help="print every difference between two recordings")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "compare":
        return compare(args.before, args.after)
    sys.path.insert(0, str(args.root.resolve()))  # that checkout's norm_katas, not another
    return record(args.out, args.root.resolve(), args.workers, args.here)


if __name__ == "__main__":
    sys.exit(main())
