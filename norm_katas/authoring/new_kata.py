"""`nox -s new-kata -- NAME`: the skeleton of a new kata, every file named after NAME.

It writes a kata that already runs and passes the self-tests, about a placeholder layer
(`<Name>(num_features)`: y = x · weight + bias, feature by feature) for the author to replace:
- stubs/<stem>.py, recorded in stubs/hashes.txt, and katas/<stem>.py, its copy (content.pristine);
- solutions/<stem>.py, the reference;
- tests/test_<stem>.py, the suite: a header, its SUITE, one check with its two hints, and
  perf_case;
- tests/catalogue/<stem>/: what the catalogue rule asks of a kata with that one check (six
  wrong files, each failing it, and two ok_ files), placeholders like the layer;
- followups/<stem>.toml, the mock's follow-up questions;
- the entry in katas.toml, and the README's kata table and docs/katas.md, regenerated
  from the registry;
- its notebook, stubs/notebooks/<stem>.ipynb, and the learner's copy notebooks/<stem>.ipynb.
Nothing is written unless NAME is a new, valid kata name and none of those files exists yet.
"""

from __future__ import annotations

import re
from pathlib import Path

from norm_katas.authoring import docs_writer, notebook_writer, record
from norm_katas.content import registry

NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
DIFFICULTY, MINUTES = "medium", 15


class ScaffoldError(Exception):
    """str() is the message for the author; nothing was written."""


def problem(name: str) -> str | None:
    """Why `name` cannot be a new kata's name, or None."""
    if not NAME.fullmatch(name):
        return (
            f"{name!r} cannot name a kata: use lowercase letters, digits and single '-' between "
            "them, starting with a letter (e.g. rmsnorm, layernorm-backward)"
        )
    katas = registry.load()
    stem = name.replace("-", "_")
    if clash := next((k for k in katas if stem in (k.name, k.stem)), None):
        return f"there is a kata named {clash.name!r} already: choose another name"
    return None


def class_name(name: str) -> str:
    """The placeholder layer's class: "my-norm" -> "MyNorm"."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("-"))


def files(kata: registry.Kata) -> dict[Path, str]:
    """Every file of the skeleton, by path, with its text (katas/<file> comes from recording)."""
    fill = {"NAME": kata.name, "TITLE": kata.title, "CLASS": class_name(kata.name)}

    def text(template: str) -> str:
        return re.sub(r"\{(NAME|TITLE|CLASS)\}", lambda m: fill[m[1]], template)

    found = {
        kata.pristine: text(STUB),
        kata.solution: text(SOLUTION),
        kata.suite: text(SUITE),
        kata.followups: text(FOLLOWUPS),
    }
    for file, (doc, forward) in {**WRONG, **OK}.items():
        expect = "pass" if file.startswith("ok_") else "test_output"
        found[kata.catalogue / f"{file}.py"] = text(CATALOGUE_FILE).format(
            doc=doc, expect=expect, forward=forward
        )
    return found


def create(name: str) -> list[str]:
    """Write the skeleton of the kata `name`; returns what was done, one line each."""
    if why := problem(name):
        raise ScaffoldError(why)
    kata = registry.Kata(name, f"{class_name(name)} from scratch", DIFFICULTY, MINUTES)
    written = files(kata)
    if there := [p for p in [*written, kata.stub, *kata.parts().values()] if p.exists()]:
        listed = ", ".join(str(p.relative_to(registry.ROOT)) for p in there)
        raise ScaffoldError(f"the kata {name!r} would overwrite what exists: {listed}")
    for path, content in written.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8", newline="\n")
    with registry.REGISTRY.open("a", encoding="utf-8", newline="\n") as f:
        f.write(ENTRY.format(name=name, title=kata.title, difficulty=DIFFICULTY, minutes=MINUTES))
    done = [f"wrote {p.relative_to(registry.ROOT)}" for p in written]
    done.append("added its entry to katas.toml")
    done += record.record()
    done.append(update_readme())
    done += notebook_writer.write()  # its notebooks, made from the stub and the entry
    return [*done, NEXT.format(name=name, stem=kata.stem)]


def update_readme() -> str:
    """Regenerate the README's kata table from the registry, between its markers."""
    readme = registry.ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    if not docs_writer.TABLE.search(text):
        return (
            "README.md has no kata table between <!-- kata-table --> markers: paste "
            "`python -m norm_katas list --markdown` there"
        )
    table = registry.kata_table()
    readme.write_text(
        docs_writer.TABLE.sub(lambda m: m[1] + table + m[2], text, count=1),
        encoding="utf-8",
        newline="\n",
    )

    return "\n".join(["updated the kata table in README.md", *docs_writer.write_generated()])


ENTRY = """
[[kata]]
name = "{name}"
title = "{title}"
difficulty = "{difficulty}"
minutes = {minutes}
"""

NEXT = """
The skeleton passes the self-tests: `nox -s tests -- -k {name}`. Now make it your kata:
1. katas.toml: its title, difficulty and minutes (the README's table follows with
   `python -m norm_katas list --markdown`, which a self-test compares).
2. stubs/{stem}.py teaches the layer and states its contract; record each change with
   `python -m norm_katas stubs --record` (which also writes its notebook again, in
   stubs/notebooks/ and, where yours is untouched, notebooks/; after a change to katas.toml,
   `python -m norm_katas notebooks --write` does).
   solutions/{stem}.py is the reference.
3. tests/test_{stem}.py: one check per property, most specific first; the first line of each
   docstring for the learner, then two hints (the idea, then the formula in maths).
4. tests/catalogue/{stem}/: every specific check must be some wrong file's EXPECT (and the
   report's headline for it), every broad one some file's EXPECT or ALSO; at least six wrong
   files and two ok_ files. The skeleton's files make the placeholder's mistakes: replace them.
5. followups/{stem}.toml: two to four questions (ending in '?') with model answers."""

STUB = '''\
"""Kata: {TITLE}.

What it is
----------
A placeholder written by the new-kata command: a per-feature scale and shift. Replace this text
with what the layer is, where it is used and why.

The maths
---------
    y[..., i] = weight[i] · x[..., i] + bias[i]

The contract (interview core)
-----------------------------
* ``{CLASS}(num_features)`` holds the parameters ``weight`` (ones) and ``bias`` (zeros), each
  of shape ``(num_features,)``.
* ``forward(x)`` scales and shifts each feature of x's last dimension by its own weight and bias.

Torch parity (stretch)
----------------------
* None yet.

Pitfalls interviewers probe
---------------------------
* The shift is added after the scale, not scaled with x.

"From scratch" rules
--------------------
Use tensor operations. Name here what the kata forbids (the built-in layer, its functional
form): a check with expect_from_scratch detects such calls at run time.

Grade yourself with::

    nox -s kata-{NAME}
"""

from __future__ import annotations

import torch
from torch import nn


class {CLASS}(nn.Module):
    """Scale and shift each feature of the last dimension.

    Args:
        num_features: size of x's last dimension.
    """

    def __init__(self, num_features: int) -> None:
        super().__init__()
        raise NotImplementedError("TODO: create weight (ones) and bias (zeros)")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: scale and shift each feature")
'''

SOLUTION = '''\
"""Reference solution: {TITLE} (the placeholder of `nox -s new-kata`)."""

from __future__ import annotations

import torch
from torch import nn


class {CLASS}(nn.Module):
    """Scale and shift each feature of the last dimension."""

    def __init__(self, num_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weight + self.bias
'''

SUITE = '''\
"""Hidden checks for the {TITLE} kata.

Say here what the checks compare with (torch's own layer, or the formula in float64) and in
which order: the interview core first, then torch parity (@pytest.mark.parity).
"""

import torch

from norm_katas.checks import PerfCase, Suite, expect_close, shape_of

SUITE = Suite()


def layer(kata, features, device):
    """The learner's {CLASS}, with random weight and bias so that each of them shows."""
    mine = kata.{CLASS}(features).to(device)
    with torch.no_grad():
        mine.weight.copy_(torch.randn(features))
        mine.bias.copy_(torch.randn(features))
    return mine


def test_output(kata, device):
    """the output scales and shifts each feature by its own weight and bias

    Every feature of the last dimension has a weight and a bias of its own.

    y[..., i] = weight[i] · x[..., i] + bias[i]
    """
    mine = layer(kata, 8, device)
    x = torch.randn(4, 8, device=device)
    expected = x.double() * mine.weight.double() + mine.bias.double()
    expect_close(mine(x), expected.float(), given=f"{CLASS}(8) on x {shape_of(x)}")


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your {CLASS} and torch.addcmul on a batch of vectors."""
    mine = layer(kata, 1024, device)
    x = torch.randn(2048, 1024, device=device, requires_grad=True)
    return PerfCase(
        given=f"{CLASS}(1024) on x {shape_of(x)}",
        mine=lambda: mine(x),
        builtin=lambda: torch.addcmul(mine.bias, x, mine.weight),
        builtin_name="torch.addcmul",
        inputs=(x,),
        bytes_moved=2 * x.nbytes,
    )
'''

FOLLOWUPS = '''\
# Asked after a mock interview of this kata (nox -s mock), one [[followup]] each: the question
# an interviewer asks, then the model answer the learner compares theirs with.

[[followup]]
question = "Why does the layer need a bias as well as a weight?"
answer = """
A placeholder of nox -s new-kata: without a bias every feature stays proportional to its \\
input, so the layer could never move a feature away from zero. Replace it with your kata's."""

[[followup]]
question = "What is the cost of the layer in memory traffic?"
answer = """
A placeholder of nox -s new-kata: it reads x, writes y and reads two vectors of parameters, \\
one pass over memory, so its time is the bytes moved divided by the bandwidth."""
'''

CATALOGUE_FILE = '''\
"""{doc}

A placeholder of nox -s new-kata: replace it with a mistake of your kata's, or a correct
variant of your layer (ok_*.py).
"""

import torch
from torch import nn

EXPECT = "{expect}"


class {CLASS}(nn.Module):
    def __init__(self, num_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        return {forward}
'''

# The placeholder's mistakes, each caught by the skeleton's one check: file -> (doc, forward).
WRONG = {
    "ignores_weight": ("Adds the bias but never scales.", "x + self.bias"),
    "ignores_bias": ("Scales but never shifts.", "x * self.weight"),
    "scales_the_bias": (
        "Shifts before scaling: the bias is scaled too.",
        "(x + self.bias) * self.weight",
    ),
    "adds_the_weight": ("Adds the weight instead of multiplying.", "x + self.weight + self.bias"),
    "subtracts_the_bias": ("Subtracts the bias.", "x * self.weight - self.bias"),
    "returns_the_input": ("Returns x as it is.", "x.clone()"),
}
OK = {
    "ok_addcmul": (
        "Correct, written differently: one torch.addcmul.",
        "torch.addcmul(self.bias, x, self.weight)",
    ),
    "ok_einsum": (
        "Correct, written differently: the scale as an einsum.",
        'torch.einsum("...i,i->...i", x, self.weight) + self.bias',
    ),
}
