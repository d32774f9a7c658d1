"""Mistake: transposes to (seq, batch, d_model) for the attention, never transposes back."""

from torch import nn

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_output_like_input"
ALSO = (
    "test_attention_over_sequence, "
    "test_post_norm_block_matches_torch, "
    "test_pre_norm_block_matches_torch"
)


class TransformerEncoderBlock(Reference):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__(d_model, nhead, dim_feedforward, dropout, norm_first)
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)

    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        return super().forward(x.transpose(0, 1), src_mask, src_key_padding_mask, is_causal)


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
