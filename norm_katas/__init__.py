"""norm-katas: practise the PyTorch normalization layers that interviews ask for.

The machinery lives here: `grader` (registry, loading a learner's file, the pytest plugin, the
report; kata authors need only `norm_katas.checks`) and `practice` (watch mode, mock
interviews, history, progress, resets), with one command line, `python -m norm_katas`.
The kata content stays outside it in a clone: katas/, stubs/, solutions/ and tests/; a wheel
(`pip install .`) ships it inside, as norm_katas/_content/ (see content.registry).
This package must import without torch: the noxfile reads the registry before torch exists.
In a notebook, `%load_ext norm_katas` loads the %kata magics (norm_katas.doors.magics), and
`norm_katas.check("layernorm", LayerNorm)` grades from plain Python (norm_katas.doors.api).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from norm_katas.doors.api import Verdict


def check(kata: str, code: object = None, *options: str) -> Verdict:
    """Grade `code` for `kata` as `%%kata` grades a cell: in a process of its own, by the same
    hidden suite, recorded in your history. `code` is your class or function (with what it uses
    from your notebook or script), a list of them, a module, a pathlib.Path or source as a str;
    left out, the kata's names defined where you call check. `options` are the grade command's:
    check("layernorm", LayerNorm, "--hints"). Returns the verdict, which a notebook shows; its
    `solved` says whether the interview core passes. See norm_katas.doors.api for the details."""
    from norm_katas.doors import api

    return api.check(kata, code, options, sys._getframe(1).f_globals)


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext norm_katas` in Jupyter or Colab: the %kata magics (see norm_katas.doors.magics).
    Imported only here, so that IPython is never a dependency of norm_katas."""
    from norm_katas.doors import magics

    magics.load(ipython)
