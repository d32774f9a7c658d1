"""The mutator behind `nox -s mutants` (tools/mutants.py): its operators and stable keys."""

from tools import mutants

SOURCE = '''
import torch


def f(x, eps=1e-5, training=True):
    """A docstring is never mutated."""
    if training:
        x = x.detach()
    with torch.no_grad():
        y = (x - x.mean(-1, keepdim=True)) * torch.rsqrt(x.var(-1) + eps)
    return y.to(x.dtype)
'''


def test_the_operators_that_fit_torch_code() -> None:
    keys = {m.key for m in mutants.generate(SOURCE)}
    line = "y = (x - x.mean(-1, keepdim=True)) * torch.rsqrt(x.var(-1) + eps)"
    for expected in (
        f"{line} | drop-term: x.var(-1) + eps -> x.var(-1)",
        f"{line} | constant: True -> False",
        f"{line} | drop-kwarg: x.mean(-1, keepdim=True) -> x.mean(-1)",
        f"{line} | swap-name: x.mean -> x.sum",
        "if training: | negate-if: training -> not training",
        "x = x.detach() | drop-call: x.detach() -> x",
        "with torch.no_grad(): | drop-with: with torch.no_grad(): -> its body",
        "return y.to(x.dtype) | drop-call: y.to(x.dtype) -> y",
    ):
        assert expected in keys, sorted(keys)
    assert not any("docstring" in k for k in keys)


def test_keys_do_not_depend_on_line_numbers() -> None:
    moved = {m.key for m in mutants.generate("\n\n\n" + SOURCE)}
    assert moved == {m.key for m in mutants.generate(SOURCE)}
