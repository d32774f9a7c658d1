"""A weak attempt: checks only the output's shape and dtype, in training and in eval."""

import torch

CATCHES = "drops_by_indexing"
FALSE_ALARMS = ""


def test_output_shape_and_dtype(kata):
    """The output has the input's shape and dtype."""
    torch.manual_seed(0)
    x = torch.randn(4, 16)
    layer = kata.Dropout(0.5)
    for training in (True, False):
        y = layer.train(training)(x)
        assert y.shape == x.shape
        assert y.dtype == x.dtype
