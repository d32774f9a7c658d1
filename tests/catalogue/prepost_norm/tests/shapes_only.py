"""A weak test file: checks only the shapes and the dtype of the outputs, of the block in both
wirings and of the two wrappers, never a value."""

import torch
from torch import nn

CATCHES = "forgets_transpose_back"
FALSE_ALARMS = ""


def test_block_output_shape(kata):
    x = torch.randn(2, 7, 32)
    for norm_first in (False, True):
        block = kata.TransformerEncoderBlock(32, 4, dim_feedforward=64, norm_first=norm_first)
        out = block.eval()(x)
        assert out.shape == (2, 7, 32)
        assert out.dtype == torch.float32


def test_wrappers_output_shape(kata):
    x = torch.randn(3, 10, 16)
    for unit in (
        kata.PreNormResidual(16, nn.Linear(16, 16)),
        kata.PostNormResidual(16, nn.Linear(16, 16)),
    ):
        assert unit(x).shape == x.shape
