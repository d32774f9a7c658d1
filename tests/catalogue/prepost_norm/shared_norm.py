"""Mistake: one LayerNorm serves both sub-blocks (norm2 = norm1), so their parameters are shared."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_two_distinct_norms"
ALSO = (
    "test_state_dict_round_trip, "
    "test_post_norm_block_matches_torch, "
    "test_pre_norm_block_matches_torch"
)


class TransformerEncoderBlock(Reference):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__(d_model, nhead, dim_feedforward, dropout, norm_first)
        self.norm2 = self.norm1


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
