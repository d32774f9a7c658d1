"""A weak attempt: checks only the output's shape and dtype on ViT-like tokens, module and
function."""

import torch

CATCHES = "mask_shape_rank2"
FALSE_ALARMS = ""


def test_output_shape_and_dtype(kata):
    """The output has the input's shape (batch, tokens, channels) and dtype."""
    torch.manual_seed(0)
    x = torch.randn(4, 10, 16)
    for y in (kata.DropPath(0.5)(x), kata.drop_path(x, 0.5, True)):
        assert y.shape == x.shape
        assert y.dtype == x.dtype
