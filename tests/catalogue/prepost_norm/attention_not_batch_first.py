"""Mistake: nn.MultiheadAttention without batch_first=True, fed (batch, seq, d_model).

It reads the input as (seq, batch, d_model), so it attends across the batch."""

from torch import nn

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_attention_over_sequence"
ALSO = "test_post_norm_block_matches_torch, test_pre_norm_block_matches_torch"


class TransformerEncoderBlock(Reference):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__(d_model, nhead, dim_feedforward, dropout, norm_first)
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
