"""Mistake: the norms always run on x.float() "for stability", which breaks a float64 block."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_to_dtype"


class TransformerEncoderBlock(Reference):
    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x.float()), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x.float()))
        x = self.norm1((x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal)).float())
        return self.norm2((x + self._ff_block(x)).float())


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
