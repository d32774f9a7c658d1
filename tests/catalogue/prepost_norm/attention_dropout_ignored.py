"""Mistake: nn.MultiheadAttention is built without the dropout argument.

Its attention weights never drop in training."""

from torch import nn

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_block_submodules"


class TransformerEncoderBlock(Reference):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__(d_model, nhead, dim_feedforward, dropout, norm_first)
        self.self_attn = nn.MultiheadAttention(d_model, nhead, batch_first=True)


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
