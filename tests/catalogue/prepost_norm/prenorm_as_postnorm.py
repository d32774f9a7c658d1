"""Mistake: PreNormResidual is wired as Post-LN, normalizing the sum instead of the input."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import PreNormResidual as Reference

EXPECT = "test_sublayer_input"
ALSO = "test_residual_path_is_x, test_prenorm_residual"


class PreNormResidual(Reference):
    def forward(self, x):
        return self.norm(x + self.sublayer(x))


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class TransformerEncoderBlock(reference.TransformerEncoderBlock):
    """Unchanged from the reference."""
