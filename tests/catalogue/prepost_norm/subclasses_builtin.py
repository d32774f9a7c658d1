"""Mistake: the block subclasses nn.TransformerEncoderLayer: right names and values, no wiring."""

from torch import nn

from solutions import prepost_norm as reference

EXPECT = "test_from_scratch"


class TransformerEncoderBlock(nn.TransformerEncoderLayer):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__(
            d_model, nhead, dim_feedforward, dropout, batch_first=True, norm_first=norm_first
        )


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
