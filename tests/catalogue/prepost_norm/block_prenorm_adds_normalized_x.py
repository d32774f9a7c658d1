"""Mistake: the Pre-LN block adds back the normalized x: h = norm(x); x = h + f(h)."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_pre_norm_block_matches_torch"


class TransformerEncoderBlock(Reference):
    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if not self.norm_first:
            return super().forward(x, src_mask, src_key_padding_mask, is_causal)
        h = self.norm1(x)
        x = h + self._sa_block(h, src_mask, src_key_padding_mask, is_causal)
        h = self.norm2(x)
        return h + self._ff_block(h)


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
