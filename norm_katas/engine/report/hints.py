"""The hints a failed check offers: a check's docstring split into its description and its
hint paragraphs, and the paragraphs (or the stub's pitfall) that fit the failure. A hint is prose
and maths, never code.
"""

from __future__ import annotations

import re

from norm_katas.engine.report.data import CRASH, FAIL, TIMEOUT, TODO, Kind


def describe(doc: str | None, fallback: str) -> tuple[str, list[str]]:
    """Split a check's docstring into its one-line description and its hint paragraphs."""
    if not doc or not doc.strip():
        return fallback.removeprefix("test_").replace("_", " "), []
    paragraphs = [" ".join(p.split()) for p in doc.strip().split("\n\n")]
    return paragraphs[0], [p for p in paragraphs[1:] if p]


# A hint is prose and maths, never a line of code (the README promises the solution code is not
# given away): no code markup, no attribute of self, no call of a dotted name (x.mean(...),
# nn.Parameter(...)), no keyword argument in a call, no statement. Naming an API in words ("an
# nn.Parameter", "register_buffer") and maths such as √(mean(x²) + ε) are fine.
CODE_IN_HINT = re.compile(
    r"`"  # code markup
    r"|\bself\."  # the module's own state, written as code
    r"|[A-Za-z_]\w*(?:\.\w+)+\("  # a call of a dotted name: x.float(), torch.ones(n)
    r"|\)\.\w+\("  # a chained call
    r"|\([^()]*\b[a-z_]\w*=[^=][^()]*\)"  # a keyword argument in a call: (x, keepdim=True)
    r"|\b(?:if|elif|while)\s[^:]*(?:==|!=|\bis\b)[^:]*:(?!\S)"  # a condition's header
    r"|\bfor\s+\w+\s+in\s+\w+\([^:]*:(?!\S)"  # a loop's header: for i in range(n):
    r"|\b(?:def|class)\s+\w+[(:]|\blambda\s*\w*:"  # a definition
    r"|\b(?:raise|return)\s+[A-Za-z_][\w.]*\("  # a statement with a call
    r"|^(?:import|from)\s+\w+"  # an import
)
# A setting written as name=value outside a call (dropout=0.0, affine=False) is how the stubs
# and titles name a configuration, and maths (μ, σ², √(mean(x²) + ε)) is how hints say a
# formula: neither is a line of code to copy.
# A hint paragraph that starts "[phrase] " applies when the failure's message contains the
# phrase: a check that can fail for several reasons gives the hints of the one that failed.
CONDITION = re.compile(r"^\[([^\]]+)\]\s*")
# Errors that say shapes do not line up, dtypes disagree, or devices differ: the stub's pitfall
# on that subject fits better than the check's own hints, which assume the code ran.
CRASH_SUBJECTS = (
    (
        re.compile(
            r"size of tensor \w+ \(\d+\) must match|shape .* is invalid|cannot be multiplied"
            r"|dimension out of range|not broadcastable|expanded size|view size"
            r"|shapes? .*(?:mismatch|do not match|must match)",
            re.I,
        ),
        ("keepdim", "broadcast"),
        "The shapes in your forward do not line up: a reduction drops the dims it reduces unless "
        "it keeps them as size 1, and then the statistics no longer broadcast against x. "
        "Print the shape of each intermediate tensor.",
    ),
    (
        re.compile(r"expected scalar type|dtype|can't be cast|type mismatch", re.I),
        ("dtype", "upcast"),
        "Two tensors of different dtypes met: every tensor forward makes must take x's dtype, "
        "or the computation dtype, and the result is cast back to x's dtype at the end.",
    ),
    (
        re.compile(r"'NoneType'"),
        ("none",),
        "A value your code used is None: an optional part of a layer, a bias or an affine "
        "weight built off, is None rather than a tensor. Check for None first, and stand in "
        "what its absence means (zeros for a bias, ones for a scale).",
    ),
    (
        re.compile(r"same device|device", re.I),
        ("device",),
        "Two tensors on different devices met: every tensor forward uses must live on x's "
        "device, either registered state that moves with the module or created there.",
    ),
)
CRASH_HINT = (
    "Your code raised an error before the check could compare anything. Call your module "
    "yourself on a small input of the same kind and read which line raises, and the shapes "
    "and dtypes it sees there."
)
# An error with no line of the learner's file on its way: the check's own code raised it,
# working with what the learner's code returned or kept (a missing attribute, say).
OUTSIDE_HINT = (
    "The error was raised outside your file, by the check itself as it used what your code "
    "returned or kept: compare that with what the contract asks for. If the message names "
    "nothing of yours, see 'When the grader itself fails' in docs/troubleshooting.md."
)
TODO_HINT = (
    "This check reached code that still raises NotImplementedError: write that part (the "
    "message names the line), then grade again."
)
TIMEOUT_HINT = (
    "Each check gives your code a few seconds: a loop that never ends, or a Python loop over "
    "every element of a large input, runs past them. Reduce over whole dimensions at once."
)


def choose_hints(
    hints: list[str], kind: Kind, message: str, pitfalls: str = "", missing: bool = False
) -> list[str]:
    """The hints that fit this failure, idea first, chosen from the check's docstring
    paragraphs (`hints`, as describe() split them) and the stub's pitfalls section.

    A wrong value: the paragraphs whose "[phrase]" the message contains, else the untagged
    ones. A crash: the pitfall on the error's subject (shapes, dtypes, devices), else a word on
    reading the error. A missing name (`missing`) is no mistake of the check's: none."""
    if missing:
        return []
    if kind == FAIL:
        tagged = [
            (m[1] if (m := CONDITION.match(h)) else None, CONDITION.sub("", h)) for h in hints
        ]
        for phrase in dict.fromkeys(t for t, _ in tagged if t):
            if phrase in message:
                return [h for t, h in tagged if t == phrase]
        return [h for t, h in tagged if t is None]
    if kind == CRASH:
        bullets = [" ".join(b.split()) for b in re.split(r"^\* ", pitfalls, flags=re.M)[1:]]
        for pattern, words, fallback in CRASH_SUBJECTS:
            if pattern.search(message):
                fits = [
                    b for b in bullets
                    if any(w in b.lower() for w in words) and not CODE_IN_HINT.search(b)
                ]  # fmt: skip
                return [fits[0] if fits else fallback]
        return [CRASH_HINT if message.startswith("your code") else OUTSIDE_HINT]
    if kind == TODO:
        return [TODO_HINT]
    if kind == TIMEOUT:
        return [TIMEOUT_HINT]
    return []
