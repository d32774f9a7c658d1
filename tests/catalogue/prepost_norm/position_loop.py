"""Mistake: the feed-forward runs position by position in a Python loop; right values."""

import torch

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_vectorized"


class TransformerEncoderBlock(Reference):
    def _ff_block(self, x):
        if x.shape[1] == 0:
            return super()._ff_block(x)
        return torch.stack(
            [super(TransformerEncoderBlock, self)._ff_block(x[:, i]) for i in range(x.shape[1])],
            dim=1,
        )


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
