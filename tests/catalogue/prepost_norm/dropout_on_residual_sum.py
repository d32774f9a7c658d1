"""Mistake: dropout2 is applied to the residual sum, not to the feed-forward branch alone."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_dropout_placement"


class TransformerEncoderBlock(Reference):
    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return self.dropout2(x + self._ff(self.norm2(x)))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(self.dropout2(x + self._ff(x)))

    def _ff(self, x):
        return self.linear2(self.dropout(self.linear1(x).relu()))


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
