"""Mistake: PostNormResidual is wired as Pre-LN, x + sublayer(norm(x)): the sum is raw."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import PostNormResidual as Reference

EXPECT = "test_sublayer_input"
ALSO = "test_residual_path_is_x, test_postnorm_residual"


class PostNormResidual(Reference):
    def forward(self, x):
        return x + self.sublayer(self.norm(x))


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""


class TransformerEncoderBlock(reference.TransformerEncoderBlock):
    """Unchanged from the reference."""
