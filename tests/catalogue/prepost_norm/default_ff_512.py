"""Mistake: dim_feedforward defaults to 512 (4 x a typical d_model) instead of torch's 2048."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_block_submodules"


class TransformerEncoderBlock(Reference):
    def __init__(self, d_model, nhead, dim_feedforward=512, dropout=0.1, norm_first=False):
        super().__init__(d_model, nhead, dim_feedforward, dropout, norm_first)


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
