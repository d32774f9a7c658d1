"""The layers a learner's tests are run against, in the test-writing mode: for each kata, its
reference solution and the catalogue's correct files (every test must pass on them), the
catalogue's interview mistakes (a test must fail on each) and the reference's mutants (the
stretch count).

Each is handed to the tests as the same module, re-printed from its syntax tree without its
docstring or its catalogue markers: neither its text nor its path says where it came from.
The learner reads them only in words: the catalogue's own description of a mistake, and how a
correct file is written.

Which catalogue files count as interview mistakes: a wrong file whose named check (EXPECT) is
one of the suite's interview core, and not a code rule, nor a file that says (RULE) that it
breaks a code rule with right values (a Triton layer that hands wide rows to torch). The code
rules (no built-in layer, no Python loop, new tensors on the input's device, the kernel does the
work, no races between a kernel's programs) are the grader's to watch as the code runs; tests of
behaviour (values, gradients, state_dict, dtypes, train and eval, errors) are not asked to see
them. Importing this module imports neither torch nor pytest.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from typing import Literal

from norm_katas.content import catalogue, mutation, registry

# The checks that enforce how the code is written, not what it does (see the module's text).
CODE_RULES = frozenset({
    "test_from_scratch", "test_vectorized", "test_follows_device", "test_built_on_device",
    "test_kernel_does_the_work", "test_kernels_do_the_work", "test_constant_memory",
    "test_saves_only_what_backward_needs", "test_is_an_autograd_function",
    "test_backward_by_hand",  # backward computed by autograd gives the same gradients
    # Triton: what the engine watches as the kernels run, which their values do not show in
    # its interpreter (one program at a time): races between programs, how often x is read,
    # what forward saves for backward.
    "test_race_free", "test_reduction_race_free", "test_reads_x_at_most_twice",
    "test_saves_output_for_backward", "test_saves_mean_and_rstd",
})  # fmt: skip
MISTAKE, CORRECT = "Mistake:", ("Correct, written differently:", "Correct:")

Kind = Literal["correct", "mistake", "mutant"]


@dataclass(frozen=True)
class Candidate:
    """One layer the learner's tests run against."""

    key: str  # stable, for the report and history: "reference", "ok_std_division", "mutant:…"
    kind: Kind
    source: str  # as the tests get it: re-printed, without docstring or markers
    words: str  # how the report names it to the learner; never its code
    check: str | None = None  # a mistake's check in the hidden suite: its hints come from there


def checks(kata: registry.Kata) -> dict[str, str]:
    """The suite's checks, in order: name -> "core" or "parity" (read from the suite's text:
    a check decorated with pytest.mark.parity is a torch-parity check)."""
    found = {}
    for node in ast.parse(kata.suite.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            marks = " ".join(ast.unparse(d) for d in node.decorator_list)
            found[node.name] = "parity" if "mark.parity" in marks else "core"
    return found


def plain(source: str) -> str:
    """The module as the tests get it: its docstring and catalogue markers gone, re-printed."""
    tree = ast.parse(source)
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    tree.body = [
        node
        for node in body
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in catalogue.NAMES
        )
    ]
    return ast.unparse(tree) + "\n"


def completed(source: str, reference: str) -> str:
    """A catalogue file with the reference's public functions and classes that it leaves out
    (a Triton mistake that defines the function but not the module class), appended with the
    reference's imports: defined in the file's own module, they call its functions, so its
    mistake shows through them too. Without them a test of the class would "catch" the file by
    an AttributeError, whatever its mistake."""
    tree, theirs = ast.parse(source), ast.parse(reference)
    bound = {name for node in tree.body for name in _bound(node)}
    missing = [
        node
        for node in theirs.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef)
        and not node.name.startswith("_")
        and node.name not in bound
    ]
    if not missing:
        return source
    imports = [node for node in theirs.body if isinstance(node, ast.Import | ast.ImportFrom)]
    tree.body += [*imports, *missing]
    return ast.unparse(tree) + "\n"


def _bound(node: ast.stmt) -> list[str]:
    """The names a top-level statement binds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def words(path_text: str, prefix: str | tuple[str, ...]) -> str:
    """A catalogue file's description: its docstring's first sentence, without the prefix (the
    sentences after it are for the catalogue's authors)."""
    doc = ast.get_docstring(ast.parse(path_text)) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    for start in (prefix,) if isinstance(prefix, str) else prefix:
        first = first.removeprefix(start)
    first = first.strip()
    sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z`(])", first, maxsplit=1)[0]
    return sentence.rstrip(".")


@functools.lru_cache(maxsize=64)
def _cached(kata: registry.Kata, stamp: tuple) -> tuple[Candidate, ...]:
    del stamp  # only the cache's key: the files' modification times
    tiers = checks(kata)
    reference = kata.solution.read_text(encoding="utf-8")
    found = [Candidate("reference", "correct", plain(reference), "the reference solution")]
    for entry in catalogue.entries(kata):
        text = entry.path.read_text(encoding="utf-8")
        layer = plain(completed(text, reference))
        if entry.correct:
            said = words(text, CORRECT) or "another correct layer"
            found.append(Candidate(entry.path.stem, "correct", layer, said))
        elif tiers.get(entry.expect) == "core" and not (entry.expect in CODE_RULES or entry.rule):
            said = words(text, MISTAKE) or entry.path.stem.replace("_", " ")
            found.append(Candidate(entry.path.stem, "mistake", layer, said, entry.expect))
    order = {name: i for i, name in enumerate(tiers)}
    correct = [c for c in found if c.kind == "correct"]
    wrong = sorted((c for c in found if c.kind == "mistake"), key=lambda c: order[c.check or ""])
    found = [*correct, *wrong]
    ledger = mutation.ledger(kata.stem)
    left_out = {key for section in ledger.values() for key in section}
    for mutant in mutation.generate(reference, docstring=False):  # plain() already
        if mutant.key not in left_out:
            source = mutant.source + "\n"
            found.append(Candidate(f"mutant:{mutant.key}", "mutant", source, "a mutant"))
    return tuple(found)


def for_kata(kata: registry.Kata) -> list[Candidate]:
    """The kata's candidates: the correct ones first, then the mistakes, then the mutants."""
    files = [kata.solution, kata.suite, *catalogue.files(kata)]
    if kata.mutants.exists():
        files.append(kata.mutants)
    stamp = tuple(path.stat().st_mtime_ns for path in files)
    return list(_cached(kata, stamp))
