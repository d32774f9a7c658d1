"""Mutants of a kata's reference solution: every small change to it, each the solution re-printed
(ast.unparse) with one node changed, and the ledger of those that are equivalent under the
kata's contract (tests/mutants/<stem>.toml).

Two users: `nox -s mutants` (tools/mutants.py) grades each mutant with the kata's hidden suite,
which must reject it; the test-writing mode runs the learner's tests against them, and counts
the ones they catch. Importing this module imports neither torch nor pytest.

A mutant is identified stably, for the ledger, by the solution's source line text (stripped),
the operator and `before -> after` (ast.unparse of the node), with `#2`, `#3` for repeats of
the same triple; never by line number.

Ledger sections: [[equivalent]] (no correct grader could reject it), [[needs_gpu]] (a real
mistake that grading on the CPU cannot reach, such as bfloat16 values in Triton's interpreter)
and [[code_rule_only]] (a real mistake that only a code rule sees, a from-scratch check, never
behaviour: the hidden suite kills it, tests of behaviour cannot, so the test-writing mode leaves
it out of its count).
"""

from __future__ import annotations

import ast
import copy
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from norm_katas.content import registry

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LEDGERS = registry.ROOT / "tests" / "mutants"
SECTIONS = ("equivalent", "needs_gpu", "code_rule_only")

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


def generate(source: str, docstring: bool = True) -> list[Mutant]:
    """Every mutant of `source`, in source order; without the module's docstring in each
    mutant's text where `docstring` is False (the keys are the same).

    Each mutant is made in the one parsed tree: the node swapped for its replacement, the
    module printed, the node put back (copying the whole tree for each one was most of the
    time, and the test-writing mode makes them as a learner waits)."""
    lines = source.splitlines()
    tree = ast.parse(source)
    skip = _skipped(tree)
    plans: list[tuple[int, str, str, str, Callable[[], Callable[[], None]]]] = []
    nodes = list(ast.walk(tree))
    slots: dict[int, tuple[ast.AST, str, int | None]] = {}  # a node's place in its parent
    for parent in nodes:
        for field, value in ast.iter_fields(parent):
            if isinstance(value, list):
                for j, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        slots.setdefault(id(item), (parent, field, j))
            elif isinstance(value, ast.AST):
                slots.setdefault(id(value), (parent, field, None))

    def swap(node: ast.AST, new: ast.AST) -> Callable[[], None]:
        """Put `new` where `node` is; returns what puts `node` back."""
        parent, field, j = slots[id(node)]
        if j is None:
            setattr(parent, field, new)
            return lambda: setattr(parent, field, node)
        getattr(parent, field)[j] = new
        return lambda: getattr(parent, field).__setitem__(j, node)

    for node in nodes:
        if id(node) in skip or not (hasattr(node, "lineno") or isinstance(node, ast.Module)):
            continue
        for operator, old, new in _edits(node):
            shown = (old.test, new.test) if isinstance(old, (ast.If, ast.IfExp)) else (old, new)
            before, after = (ast.unparse(n).splitlines()[0] for n in shown)  # type: ignore[arg-type]
            if before == after:
                continue
            plans.append((node.lineno, operator, before, after, lambda n=node, r=new: swap(n, r)))
        for operator, body, i, replacement in _statement_edits(node):
            stmt = body[i]
            if id(stmt) in skip:
                continue
            before = ast.unparse(stmt).splitlines()[0]
            after = "pass" if operator == "drop-statement" else "its body"

            def drop(
                body: list[ast.stmt] = body, i: int = i, stmt: ast.stmt = stmt,
                replacement: list[ast.stmt] = replacement,
            ) -> Callable[[], None]:  # fmt: skip
                body[i : i + 1] = replacement
                return lambda: body.__setitem__(slice(i, i + len(replacement)), [stmt])

            plans.append((stmt.lineno, operator, before, after, drop))

    first = tree.body[0] if tree.body else None
    if not docstring and isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        tree.body.remove(first)
    mutants: list[Mutant] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, operator, before, after, apply in sorted(plans, key=lambda p: p[0]):
        restore = apply()
        try:
            mutated = ast.unparse(tree)
        finally:
            restore()
        text = lines[line - 1].strip()
        change = f"{before} -> {after}"
        nth = seen[(text, operator, change)] = seen.get((text, operator, change), 0) + 1
        mutants.append(Mutant(line, text, operator, change, mutated, nth))
    return mutants


def ledger(stem: str) -> dict[str, dict[str, str]]:
    """tests/mutants/<stem>.toml: for each section (SECTIONS), mutant key -> why. Each entry has
    a line, a mutation and a why."""
    path = LEDGERS / f"{stem}.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return {
        section: {f"{e['line']} | {e['mutation']}": e["why"] for e in data.get(section, [])}
        for section in SECTIONS
    }
