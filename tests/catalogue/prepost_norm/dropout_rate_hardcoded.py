"""Mistake: F.dropout with torch's default rate 0.1 written in, not the block's dropout
argument: a block built with dropout=0.0 still drops in training."""

import torch.nn.functional as F

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_post_norm_block_matches_torch"
ALSO = "test_pre_norm_block_matches_torch"


class TransformerEncoderBlock(Reference):
    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(
            x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False
        )[0]
        return F.dropout(x, 0.1, self.training)

    def _ff_block(self, x):
        x = self.linear2(F.dropout(F.relu(self.linear1(x)), 0.1, self.training))
        return F.dropout(x, 0.1, self.training)


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
