"""Mistake: forward accepts src_mask and src_key_padding_mask but never uses them."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_masks_match_torch"


class TransformerEncoderBlock(Reference):
    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        return super().forward(x)


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
