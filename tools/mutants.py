"""Mutation testing of the graders: each kata's suite must reject every small change to its
reference solution (solutions/<kata>.py), or that change must be equivalent under the kata's
contract and say why in tests/mutants/<kata>.toml.

    python -m tools.mutants [KATA ...] [--workers N] [--list]     (nox -s mutants -- KATA ...)

Why a mutator of its own rather than mutmut or cosmic-ray: both mutate a package in place and
decide a mutant by running the project's own test command (mutmut's pytest with its trampolines,
cosmic-ray's test-command per mutant from a session database). Here the thing under test is
the grader, and a mutant is graded as a learner's file: `--impl FILE` through the warm grader
(norm_katas.engine.server.Client), which imports torch and every suite once per worker; a
pytest start per mutant would cost more than the grading. Neither ships the operators that
matter for torch code either: dim/keepdim/unbiased keywords, a dropped term (+ eps, * weight),
a dropped .detach() or torch.no_grad(), a negated `if self.training`, a dropped dtype cast,
reduce ops of collectives. So this is a small AST mutator: every mutant is the solution
re-printed (ast.unparse) with one node changed.

A mutant is identified stably, for the ledger, by the solution's source line text (stripped),
the operator and `before -> after` (ast.unparse of the node), with `#2`, `#3` for repeats of
the same triple; never by line number. A mutant is killed when its grading is not solved with
torch parity (exit status 1, or 0 without strict_solved); exit status 3 (the grader failed) is
an error, never a kill.

Speed (the issue's budget: every kata within 10 minutes on two cores). One pool of warm
graders serves every kata; each grading stops at its first failing check (-x), and runs first
the checks that killed this run's earlier mutants of the same line, then the kata's most
frequent killers (Request.first: an order, never a verdict; a survivor runs every check, and
nothing is remembered between runs). Mutants whose modules print the same are graded once.
The table's cpu column is the graders' CPU time, fairer than the wall clock on a busy machine.

Ledger sections: [[equivalent]] (no correct grader could reject it: left out of the score) and
[[needs_gpu]] (a real mistake that grading on the CPU cannot reach, such as bfloat16 values in
Triton's interpreter: its own column, left out of the score; with --device cuda each must be
killed like any mutant).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from norm_katas.content import mutation
from norm_katas.content.mutation import Mutant, generate

ROOT = Path(__file__).resolve().parents[1]
LEDGERS = mutation.LEDGERS

# -- grading ----------------------------------------------------------------------------------


class Graders:
    """Warm graders (norm_katas.engine.server), one per worker, started once for every kata:
    each imports torch and every suite, seconds of CPU that a server per kata would repeat."""

    def __init__(self, workers: int, device: str = "cpu") -> None:
        from norm_katas.engine import server

        self.tmp = Path(tempfile.mkdtemp(prefix="mutants-"))
        self.env = {
            **os.environ, "NORM_KATAS_DATA": str(self.tmp / "data"),
            "NORM_KATAS_PERF_BUDGET_S": "0", "OMP_NUM_THREADS": "1",
        }  # fmt: skip
        self.clients: list[server.Client] = []
        problems: list[str] = []

        def start() -> None:
            client = server.Client(env=self.env, device=device)
            (problems.append(client.error) if client.error else self.clients.append(client))

        threads = [threading.Thread(target=start) for _ in range(max(1, workers))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if not self.clients:
            raise SystemExit(f"the grading server could not start:\n{problems[0]}")

    def cpu_seconds(self) -> float | None:
        """CPU time the servers and their gradings have used so far (Linux), else None: on a
        shared machine a fairer measure than the wall clock."""
        total = 0.0
        try:
            for client in self.clients:
                stat = Path(f"/proc/{client.process.pid}/stat").read_text()
                fields = stat.rsplit(")", 1)[1].split()
                total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            return None
        return total / os.sysconf("SC_CLK_TCK")

    def close(self, keep: bool) -> None:
        for client in self.clients:
            client.close()
        if not keep:  # the transcripts are kept only when an error points to one
            shutil.rmtree(self.tmp, ignore_errors=True)


class Killers:
    """Which checks killed which mutants so far in this run, to run those checks first for the
    next mutants (Request.first): a mutant is mostly killed by the check that killed its
    neighbours on the same line, else by the kata's most frequent killers. Only the order of
    the checks depends on it, never a verdict: a survivor still runs every check."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_line: dict[str, list[str]] = {}
        self.counts: dict[str, int] = {}

    def order(self, mutant: Mutant) -> tuple[str, ...]:
        with self.lock:
            frequent = sorted(self.counts, key=lambda name: -self.counts[name])
            return tuple(dict.fromkeys([*self.by_line.get(mutant.text, []), *frequent]))

    def record(self, mutant: Mutant, report: dict) -> None:
        failed = [c["name"] for c in report.get("checks", []) if c.get("outcome") == "failed"]
        with self.lock:
            for name in failed:
                self.counts[name] = self.counts.get(name, 0) + 1
                line = self.by_line.setdefault(mutant.text, [])
                if name in line:
                    line.remove(name)
                line.insert(0, name)


def grade_all(
    kata: str, mutants: list[Mutant], graders: Graders, device: str = "cpu"
) -> dict[str, str]:
    """key -> "killed", "survived" or "error: ...", each mutant graded by a warm grader, with
    -x (a mutant is killed at its first failing check). Mutants whose modules print the same
    are graded once."""
    from dataclasses import replace

    from norm_katas.content import registry
    from norm_katas.engine.request import Request

    by_source: dict[str, list[Mutant]] = {}
    for mutant in mutants:
        by_source.setdefault(mutant.source, []).append(mutant)
    todo: queue.Queue[tuple[int, list[Mutant]]] = queue.Queue()
    for item in enumerate(by_source.values()):
        todo.put(item)
    results: dict[str, str] = {}
    lock = threading.Lock()
    killers = Killers()
    tmp = graders.tmp

    def work(client_index: int) -> None:
        client = graders.clients[client_index]
        while True:
            try:
                n, same = todo.get_nowait()
            except queue.Empty:
                return
            mutant = same[0]
            impl, report, out = (tmp / f"{kata}_{n}{s}" for s in (".py", ".json", ".txt"))
            impl.write_text(mutant.source)
            args = ["--impl", str(impl), f"--report-json={report}", "-x", "--timeout=5"]
            args += ["--device", device]
            request = replace(Request.parse(registry.get(kata), args), first=killers.order(mutant))
            try:
                code = client.grade(request, out)
            except RuntimeError as e:  # the server itself ended: a new one for the next mutant
                code = 3
                out.write_text(f"{e}\n")
                graders.clients[client_index] = client = type(client)(env=graders.env)
            data = json.loads(report.read_text()) if report.exists() else {}
            if code == 3 or (code == 0 and not data):
                verdict = f"error: exit status {code}, see {out}"
            elif code != 0 or not data.get("strict_solved"):
                verdict = "killed"
                killers.record(mutant, data)
            else:
                verdict = "survived"
            with lock:
                for m in same:
                    results[m.key] = verdict

    workers = max(1, min(len(graders.clients), len(by_source)))
    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def read_ledger(kata: str) -> tuple[dict[str, str], dict[str, str]]:
    """From tests/mutants/<kata>.toml, key -> why for [[equivalent]] and for [[needs_gpu]]
    (norm_katas.content.mutation)."""
    sections = mutation.ledger(kata)
    return sections["equivalent"], sections["needs_gpu"]


def solution(kata: str) -> str:
    from norm_katas.content import registry

    return registry.get(kata).solution.read_text(encoding="utf-8")


def run_kata(kata: str, graders: Graders, device: str = "cpu") -> tuple[tuple, bool]:
    """Grade every mutant of `kata`; say each unledgered survivor, error and stale ledger
    entry. Returns the table's row and whether there was any of those. On a GPU the
    [[needs_gpu]] entries are mistakes like any other: each must be killed."""
    from norm_katas.content import registry

    stem = Path(registry.get(kata).file).stem  # the ledger is named as the catalogue is
    mutants = generate(solution(kata))
    ledger, needs_gpu = read_ledger(stem)
    if device.startswith("cuda"):
        needs_gpu = {}
    start, cpu = time.monotonic(), graders.cpu_seconds()
    results = grade_all(kata, mutants, graders, device)
    seconds, cpu_after = time.monotonic() - start, graders.cpu_seconds()
    killed = sum(v == "killed" for v in results.values())
    survivors = [m for m in mutants if results.get(m.key) == "survived"]
    errors = [(m, results.get(m.key, "not graded")) for m in mutants]
    errors = [(m, v) for m, v in errors if v not in ("killed", "survived")]
    equivalent = [m for m in survivors if m.key in ledger]
    gpu = [m for m in survivors if m.key in needs_gpu]
    unledgered = [m for m in survivors if m.key not in ledger and m.key not in needs_gpu]
    # A ledger entry no survivor matches: the solution changed, or the suite now kills it.
    stale = sorted((set(ledger) | set(needs_gpu)) - {m.key for m in survivors})
    for m in unledgered:
        print(f"{kata}: SURVIVED (not in tests/mutants/{stem}.toml) line {m.line}: {m.key}")
    for m, v in errors:
        print(f"{kata}: ERROR line {m.line}: {m.key}: {v}")
    for key in stale:
        print(f"{kata}: STALE ledger entry (no surviving mutant matches it): {key}")
    sys.stdout.flush()
    # The score leaves out the equivalent mutants and those only a GPU can kill (own column).
    graded = len(mutants) - len(equivalent) - len(gpu)
    score = killed / graded if graded else 1.0
    used = None if cpu is None or cpu_after is None else cpu_after - cpu
    row = (kata, len(mutants), killed, len(equivalent), len(gpu), score, seconds, used)
    return row, bool(unledgered or errors or stale)


def main(argv: list[str] | None = None) -> int:
    from norm_katas.content import registry

    parser = argparse.ArgumentParser(prog="nox -s mutants --", description=__doc__.split("\n")[0])
    parser.add_argument("katas", nargs="*", metavar="KATA", help="default: every kata")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--list", action="store_true", help="list the mutants, grade nothing")
    parser.add_argument(
        "--device", default="cpu", help="grade on this device (cuda: [[needs_gpu]] must die too)"
    )
    args = parser.parse_args(argv)
    names = [k.name for k in registry.load()]
    unknown = [k for k in args.katas if k not in names]
    if unknown:
        parser.error(f"no kata named {', '.join(unknown)}; katas: {', '.join(names)}")
    if args.list:
        for kata in args.katas or names:
            for m in generate(solution(kata)):
                print(f"{kata}:{m.line}: {m.key}")
        return 0
    failed = False
    rows = []
    graders = Graders(args.workers, args.device)
    try:
        for kata in args.katas or names:
            row, problems = run_kata(kata, graders, args.device)
            rows.append(row)
            failed |= problems
    finally:
        graders.close(keep=failed)
    head = ("kata", "generated", "killed", "equiv", "gpu", "score", "time", "cpu")
    print("\n{:<20} {:>9} {:>7} {:>6} {:>4} {:>7} {:>6} {:>6}".format(*head))
    for kata, n, killed, eq, gpu, score, seconds, cpu in rows:
        used = "-" if cpu is None else f"{cpu:.0f}s"
        print(
            f"{kata:<20} {n:>9} {killed:>7} {eq:>6} {gpu:>4} {score:>7.1%} {seconds:>5.0f}s "
            f"{used:>6}"
        )
    if any(row[4] for row in rows):
        print("gpu: survivors on the CPU that only a GPU can kill (see the ledgers' [[needs_gpu]])")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
