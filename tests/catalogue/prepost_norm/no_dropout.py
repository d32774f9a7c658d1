"""Mistake: no dropout at all: the modules exist (for the state_dict names) but are never called."""

import torch.nn.functional as F
from torch import nn

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_block_submodules"
ALSO = "test_dropout_active_in_train"


class TransformerEncoderBlock(Reference):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__(d_model, nhead, dim_feedforward, dropout, norm_first)
        self.self_attn = nn.MultiheadAttention(d_model, nhead, batch_first=True)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        return self.self_attn(
            x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False
        )[0]

    def _ff_block(self, x):
        return self.linear2(F.relu(self.linear1(x)))


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
