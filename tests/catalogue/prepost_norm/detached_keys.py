"""Mistake: keys and values detached "to save memory": right forward, wrong gradients."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_gradients_match"


class TransformerEncoderBlock(Reference):
    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        kv = x.detach()
        x = self.self_attn(
            x, kv, kv, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False
        )[0]
        return self.dropout1(x)


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
