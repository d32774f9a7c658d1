"""Mistake: the residual additions are in place (x += ...), overwriting the caller's tensor."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_input_unmodified"
ALSO = "test_gradients_match"


class TransformerEncoderBlock(Reference):
    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if self.norm_first:
            x += self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x += self._ff_block(self.norm2(x))
            return x
        x += self._sa_block(x, src_mask, src_key_padding_mask, is_causal)
        x = self.norm1(x)
        return self.norm2(x + self._ff_block(x))


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
