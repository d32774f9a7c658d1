"""Mistake: F.dropout(x, p) without training=self.training drops in eval mode too."""

import torch.nn.functional as F

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_dropout_off_in_eval"


class TransformerEncoderBlock(Reference):
    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(
            x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False
        )[0]
        return F.dropout(x, self.dropout1.p)

    def _ff_block(self, x):
        x = self.linear2(F.dropout(F.relu(self.linear1(x)), self.dropout.p))
        return F.dropout(x, self.dropout2.p)


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
