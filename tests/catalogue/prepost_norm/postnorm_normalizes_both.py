"""Mistake: Post-LN normalizes the residual and the input: norm(x) + sublayer(norm(x))."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import PostNormResidual as Reference

EXPECT = "test_sublayer_input"
ALSO = "test_postnorm_residual"


class PostNormResidual(Reference):
    def forward(self, x):
        h = self.norm(x)
        return h + self.sublayer(h)


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""


class TransformerEncoderBlock(reference.TransformerEncoderBlock):
    """Unchanged from the reference."""
