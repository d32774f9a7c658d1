"""A check's name in the learner's words: the first line of its docstring, as the checklist
says it (progress's weak spots, the history's list, the reasons `today` gives)."""

from __future__ import annotations

import ast
import contextlib
import functools

from norm_katas.content import candidates, registry


@functools.cache
def sentences(kata: registry.Kata) -> dict[str, str]:
    """Check name -> the one-line description the learner reads, from the suite's docstrings."""
    try:
        tree = ast.parse(kata.suite.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return {}
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            doc = ast.get_docstring(node) or ""
            found[node.name] = " ".join(doc.split("\n\n")[0].split()) or node.name
    return found


def sentence(kata: registry.Kata, check: str) -> str:
    """'the variance is the biased one ... [float16]' for 'test_biased_variance[float16]'.
    A grading of the test-writing mode names a mistake its tests missed (a catalogue file's
    name), or a test of the learner's that failed on a correct layer ('false alarm: test_x')."""
    if check.startswith("false alarm: "):
        return f"your {check.removeprefix('false alarm: ')} fails on a correct layer"
    if not check.startswith("test_"):
        path = kata.catalogue / f"{check}.py"
        with contextlib.suppress(OSError, SyntaxError):
            said = candidates.words(path.read_text(encoding="utf-8"), candidates.MISTAKE)
            return f"your tests miss: {said}"
    name, _, param = check.partition("[")
    text = sentences(kata).get(name, name.removeprefix("test_").replace("_", " "))
    return f"{text} [{param}" if param else text
