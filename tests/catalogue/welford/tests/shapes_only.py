"""A learner's first tests of Welford: only the shapes and dtype of mean and var() after a few
updates. Every accumulator that keeps (F,) tensors passes, whatever their values."""

import torch

CATCHES = ""
FALSE_ALARMS = ""


def test_mean_and_var_shapes(kata):
    """After two updates, mean and var() are (F,) tensors."""
    torch.manual_seed(0)
    w = kata.Welford(5)
    w.update(torch.randn(4, 5))
    w.update(torch.randn(3, 5))
    assert w.mean.shape == (5,)
    assert w.var().shape == (5,)


def test_float32_by_default(kata):
    """The statistics are float32 when nothing else is asked for."""
    torch.manual_seed(0)
    w = kata.Welford(3)
    w.update(torch.randn(4, 3))
    assert w.mean.dtype == torch.float32
    assert w.var().dtype == torch.float32
