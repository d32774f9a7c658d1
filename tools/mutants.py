"""Mutation testing of the graders: each kata's suite must reject every small change to its
reference solution (solutions/<kata>.py), or that change must be equivalent under the kata's
contract and say why in tests/mutants/<kata>.toml.

    python -m tools.mutants [KATA ...] [--workers N] [--list]     (nox -s mutants -- KATA ...)

Why a mutator of its own rather than mutmut or cosmic-ray: both mutate a package in place and
decide a mutant by running the project's own test command (mutmut's pytest with its trampolines,
cosmic-ray's test-command per mutant from a session database). Here the thing under test is
the grader, and a mutant is graded as a learner's file: `--impl FILE` through the warm grader
(norm_katas.grader.server.Client), which imports torch and every suite once per worker; a
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
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import queue
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
        if len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
            swapped = [node.args[1], node.args[0], *node.args[2:]]
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
            if (isinstance(stmt, (ast.Expr, ast.Raise)) and not doc) or attr:
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


def grade_all(kata: str, mutants: list[Mutant], workers: int) -> dict[str, str]:
    """key -> "killed", "survived" or "error: ...", each mutant graded by a warm grader."""
    from norm_katas.grader import registry, server
    from norm_katas.grader.request import Request

    tmp = Path(tempfile.mkdtemp(prefix=f"mutants-{kata}-"))
    env = {
        **os.environ, "NORM_KATAS_DATA": str(tmp / "data"), "NORM_KATAS_PERF_BUDGET_S": "0",
        "OMP_NUM_THREADS": "1",
    }  # fmt: skip
    todo: queue.Queue[tuple[int, Mutant]] = queue.Queue()
    for item in enumerate(mutants):
        todo.put(item)
    results: dict[str, str] = {}
    lock = threading.Lock()
    problems: list[str] = []

    def work() -> None:
        client = server.Client(env=env)
        if client.error:
            problems.append(client.error)
            return
        try:
            while True:
                try:
                    n, mutant = todo.get_nowait()
                except queue.Empty:
                    return
                impl, report, out = (tmp / f"{kata}_{n}{s}" for s in (".py", ".json", ".txt"))
                impl.write_text(mutant.source)
                args = ["--impl", str(impl), f"--report-json={report}", "-x", "--timeout=5"]
                code = client.grade(Request.parse(registry.get(kata), args), out)
                data = json.loads(report.read_text()) if report.exists() else {}
                if code == 3 or (code == 0 and not data):
                    verdict = f"error: exit status {code}, see {out}"
                elif code != 0 or not data.get("strict_solved"):
                    verdict = "killed"
                else:
                    verdict = "survived"
                with lock:
                    results[mutant.key] = verdict
        finally:
            client.close()

    threads = [threading.Thread(target=work) for _ in range(max(1, min(workers, len(mutants))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if problems and not results:
        raise SystemExit(f"the grading server could not start:\n{problems[0]}")
    return results


def read_ledger(kata: str) -> dict[str, str]:
    """key -> why, from tests/mutants/<kata>.toml ([[equivalent]] line, mutation, why)."""
    import tomllib

    path = LEDGERS / f"{kata}.toml"
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {f"{e['line']} | {e['mutation']}": e["why"] for e in data.get("equivalent", [])}


def main(argv: list[str] | None = None) -> int:
    from norm_katas.grader import registry

    parser = argparse.ArgumentParser(prog="nox -s mutants --", description=__doc__.split("\n")[0])
    parser.add_argument("katas", nargs="*", metavar="KATA", help="default: every kata")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--list", action="store_true", help="list the mutants, grade nothing")
    args = parser.parse_args(argv)
    names = [k.name for k in registry.load()]
    unknown = [k for k in args.katas if k not in names]
    if unknown:
        parser.error(f"no kata named {', '.join(unknown)}; katas: {', '.join(names)}")
    failed = False
    rows = []
    for kata in args.katas or names:
        stem = Path(registry.get(kata).file).stem  # the ledger is named as the catalogue is
        source = (ROOT / "solutions" / f"{stem}.py").read_text(encoding="utf-8")
        mutants = generate(source)
        if args.list:
            for m in mutants:
                print(f"{kata}:{m.line}: {m.key}")
            continue
        ledger = read_ledger(stem)
        start = time.monotonic()
        results = grade_all(kata, mutants, args.workers)
        seconds = time.monotonic() - start
        killed = sum(v == "killed" for v in results.values())
        survivors = [m for m in mutants if results.get(m.key) == "survived"]
        errors = [(m, results.get(m.key, "not graded")) for m in mutants]
        errors = [(m, v) for m, v in errors if v not in ("killed", "survived")]
        equivalent = [m for m in survivors if m.key in ledger]
        unledgered = [m for m in survivors if m.key not in ledger]
        # A ledger entry no survivor matches: the solution changed, or the suite now kills it.
        stale = sorted(set(ledger) - {m.key for m in survivors})
        for m in unledgered:
            print(f"{kata}: SURVIVED (not in tests/mutants/{stem}.toml) line {m.line}: {m.key}")
        for m, v in errors:
            print(f"{kata}: ERROR line {m.line}: {m.key}: {v}")
        for key in stale:
            print(f"{kata}: STALE ledger entry (no surviving mutant matches it): {key}")
        failed |= bool(unledgered or errors or stale)
        graded = len(mutants) - len(equivalent)
        score = killed / graded if graded else 1.0
        rows.append((kata, len(mutants), killed, len(equivalent), score, seconds))
        sys.stdout.flush()
    if rows:
        head = ("kata", "generated", "killed", "equiv", "score", "time")
        print("\n{:<20} {:>9} {:>7} {:>6} {:>7} {:>7}".format(*head))
        for kata, n, killed, eq, score, seconds in rows:
            print(f"{kata:<20} {n:>9} {killed:>7} {eq:>6} {score:>7.1%} {seconds:>6.0f}s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
