"""Mistake: one LayerNorm serves both sub-blocks (norm2 = norm1), so their parameters are shared."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_two_distinct_norms"


class TransformerEncoderBlock(Reference):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__(d_model, nhead, dim_feedforward, dropout, norm_first)
        self.norm2 = self.norm1


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
