"""A check's name in the learner's words: the first line of its docstring, as the checklist
says it (progress's weak spots, the history's list, the reasons `today` gives)."""

from __future__ import annotations

import ast
import functools

from norm_katas.content import registry


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
    """'the variance is the biased one ... [float16]' for 'test_biased_variance[float16]'."""
    name, _, param = check.partition("[")
    text = sentences(kata).get(name, name.removeprefix("test_").replace("_", " "))
    return f"{text} [{param}" if param else text
