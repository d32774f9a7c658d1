"""norm-katas: practise the PyTorch normalization layers that interviews ask for.

The machinery lives here: `grader` (registry, loading a learner's file, the pytest plugin, the
report; kata authors need only `norm_katas.grader.checks`) and `practice` (watch mode, mock
interviews, history, progress, resets), with one command line, `python -m norm_katas`.
The kata content stays outside it in a clone: katas/, stubs/, solutions/ and tests/; a wheel
(`pip install .`) ships it inside, as norm_katas/_content/ (see grader.registry).
This package must import without torch: the noxfile reads the registry before torch exists.
In a notebook, `%load_ext norm_katas` loads the %kata magics (norm_katas.notebook).
"""


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext norm_katas` in Jupyter or Colab: the %kata magics (see norm_katas.notebook).
    Imported only here, so that IPython is never a dependency of norm_katas."""
    from norm_katas import notebook

    notebook.load(ipython)
