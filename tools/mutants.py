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
import ast
import copy
import json
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LEDGERS = ROOT / "tests" / "mutants"

ARITH = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div, ast.Pow: ast.Mult, ast.Mod: ast.FloorDiv, ast.MatMult: ast.Mult,
}  # fmt: skip
COMPARE = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE,
    ast.GtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
# Methods whose call can be dropped, leaving the receiver: casts, copies, detaching.
DROPPABLE = {"detach", "contiguous", "clone", "float", "double", "to", "type_as", "view_as"}
# Functions or methods swapped for a near neighbour of the same signature.
SWAPS = {
    "mean": "sum", "sum": "mean", "rsqrt": "sqrt", "sqrt": "rsqrt", "amax": "amin",
    "add_": "sub_", "mul_": "div_", "float32": "float16", "float64": "float32",
    "SUM": "MAX", "AVG": "SUM", "MAX": "MIN", "all_reduce": "broadcast",
    "program_id": "num_programs", "maximum": "minimum", "minimum": "maximum",
}  # fmt: skip


@dataclass
class Mutant:
    line: int  # where, for the reader only: the ledger never keys on it
    text: str  # the solution's source line, stripped
    operator: str
    change: str  # "before -> after"
    source: str  # the whole mutated module
    nth: int = 1

    @property
    def key(self) -> str:
        suffix = f" #{self.nth}" if self.nth > 1 else ""
        return f"{self.text} | {self.operator}: {self.change}{suffix}"


def _skipped(tree: ast.Module) -> set[int]:
    """Nodes never mutated: docstrings, annotations, imports, messages (strings, f-strings)."""
    skip: set[int] = set()

    def under(node: ast.AST | None) -> None:
        for sub in ast.walk(node) if node is not None else ():
            skip.add(id(sub))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            under(first)
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.JoinedStr)):
            under(node)
        if isinstance(node, ast.AnnAssign):
            under(node.annotation)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            under(node.returns)
            for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
                under(a.annotation)
        if isinstance(node, ast.Raise):  # the statement may go; its message is not graded
            under(node.exc)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            skip.add(id(node))
    return skip


Edit = tuple[str, ast.AST, "ast.AST | list[ast.stmt] | None"]  # operator, node, replacement


def _edits(node: ast.AST) -> Iterator[Edit]:
    """The mutations of one node: (operator, node, what replaces it)."""
    if isinstance(node, ast.BinOp):
        if type(node.op) in ARITH:
            yield "arith", node, ast.BinOp(node.left, ARITH[type(node.op)](), node.right)
        if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            yield "drop-term", node, node.left
            yield "drop-term", node, node.right
    elif isinstance(node, ast.AugAssign) and type(node.op) in ARITH:
        yield "arith", node, ast.AugAssign(node.target, ARITH[type(node.op)](), node.value)
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE:
        swapped = [COMPARE[type(node.ops[0])]()]
        yield "compare", node, ast.Compare(node.left, swapped, node.comparators)
    elif isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            yield "constant", node, ast.Constant(not v)
        elif isinstance(v, int):
            yield "constant", node, ast.Constant(v + 1)
            yield "constant", node, ast.Constant(v - 1)
        elif isinstance(v, float):
            yield "constant", node, ast.Constant(v + 1)
            if v not in (0.0, 1.0):  # else the same as v + 1, or as v itself
                yield "constant", node, ast.Constant(0.0)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        yield "drop-unary", node, node.operand
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "boolop", node, ast.BoolOp(other, node.values)
        for i in range(len(node.values)):
            rest = node.values[:i] + node.values[i + 1 :]
            yield "drop-operand", node, rest[0] if len(rest) == 1 else ast.BoolOp(node.op, rest)
    elif isinstance(node, (ast.If, ast.IfExp)):
        negated = ast.UnaryOp(ast.Not(), node.test)
        for name, test in (("negate-if", negated), ("if-true", ast.Constant(True))):
            new = copy.copy(node)
            new.test = test
            yield name, node, new
        new = copy.copy(node)
        new.test = ast.Constant(False)
        yield "if-false", node, new
    elif isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in DROPPABLE:
            yield "drop-call", node, func.value
        for i in range(len(node.args) - 1):  # neighbours: (x, y), (stride_x, stride_y), ...
            a, b = node.args[i : i + 2]
            if not isinstance(a, ast.Starred) and not isinstance(b, ast.Starred):
                swapped = [*node.args[:i], b, a, *node.args[i + 2 :]]
                yield "swap-args", node, ast.Call(func, swapped, node.keywords)
        for i, kw in enumerate(node.keywords):
            if kw.arg is not None:
                rest = node.keywords[:i] + node.keywords[i + 1 :]
                yield "drop-kwarg", node, ast.Call(func, node.args, rest)
    if isinstance(node, ast.Attribute) and node.attr in SWAPS:
        yield "swap-name", node, ast.Attribute(node.value, SWAPS[node.attr], node.ctx)


def _statement_edits(node: ast.AST) -> Iterator[tuple[str, list[ast.stmt], int, list[ast.stmt]]]:
    """Statements that can go: (operator, body, index, replacement statements)."""
    for field in ("body", "orelse", "finalbody"):
        body = getattr(node, field, None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body):
            doc = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            attr = isinstance(stmt, (ast.Assign, ast.AugAssign)) and any(
                isinstance(t, ast.Attribute)
                for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
            )
            # An early return (inside an if, a with, ...): the code after it runs instead.
            early = isinstance(stmt, ast.Return) and not isinstance(node, ast.FunctionDef)
            if (isinstance(stmt, (ast.Expr, ast.Raise)) and not doc) or attr or early:
                yield "drop-statement", body, i, [ast.Pass()]
            elif isinstance(stmt, ast.With):
                yield "drop-with", body, i, stmt.body


def generate(source: str) -> list[Mutant]:
    """Every mutant of `source`, in source order."""
    lines = source.splitlines()
    tree = ast.parse(source)
    skip = _skipped(tree)
    plans: list[tuple[int, str, str, str, Callable[[ast.Module], None]]] = []
    nodes = list(ast.walk(tree))

    def parent_slot(root: ast.AST, target: ast.AST) -> tuple[ast.AST, str, int | None]:
        for parent in ast.walk(root):
            for field, value in ast.iter_fields(parent):
                if value is target:
                    return parent, field, None
                if isinstance(value, list):
                    for j, item in enumerate(value):
                        if item is target:
                            return parent, field, j
        raise LookupError("node without a parent")

    for index, node in enumerate(nodes):
        if id(node) in skip or not (hasattr(node, "lineno") or isinstance(node, ast.Module)):
            continue
        for operator, old, new in _edits(node):
            shown = (old.test, new.test) if isinstance(old, (ast.If, ast.IfExp)) else (old, new)
            before, after = (ast.unparse(n).splitlines()[0] for n in shown)  # type: ignore[arg-type]
            if before == after:
                continue

            def apply(root: ast.Module, index: int = index, new: ast.AST = new) -> None:
                target = list(ast.walk(root))[index]
                parent, field, j = parent_slot(root, target)
                replacement = copy.deepcopy(new)
                if j is None:
                    setattr(parent, field, replacement)
                else:
                    getattr(parent, field)[j] = replacement

            plans.append((node.lineno, operator, before, after, apply))
        for operator, body, i, replacement in _statement_edits(node):
            stmt = body[i]
            if id(stmt) in skip:
                continue
            before = ast.unparse(stmt).splitlines()[0]
            after = "pass" if operator == "drop-statement" else "its body"
            field = next(f for f, v in ast.iter_fields(node) if v is body)

            def drop(
                root: ast.Module, index: int = index, field: str = field, i: int = i,
                replacement: list[ast.stmt] = replacement,
            ) -> None:  # fmt: skip
                parent = list(ast.walk(root))[index]
                getattr(parent, field)[i : i + 1] = copy.deepcopy(replacement)

            plans.append((stmt.lineno, operator, before, after, drop))

    mutants: list[Mutant] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, operator, before, after, apply in sorted(plans, key=lambda p: p[0]):
        root = copy.deepcopy(tree)
        apply(root)
        text = lines[line - 1].strip()
        change = f"{before} -> {after}"
        nth = seen[(text, operator, change)] = seen.get((text, operator, change), 0) + 1
        mutated = ast.unparse(ast.fix_missing_locations(root))
        mutants.append(Mutant(line, text, operator, change, mutated, nth))
    return mutants


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
    """From tests/mutants/<kata>.toml, key -> why for [[equivalent]] (no correct grader could
    reject it) and for [[needs_gpu]] (killed on a GPU, not on the CPU: bfloat16 in Triton's
    interpreter), each entry a line, a mutation and a why."""
    import tomllib

    path = LEDGERS / f"{kata}.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return tuple(  # type: ignore[return-value]
        {f"{e['line']} | {e['mutation']}": e["why"] for e in data.get(section, [])}
        for section in ("equivalent", "needs_gpu")
    )


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
