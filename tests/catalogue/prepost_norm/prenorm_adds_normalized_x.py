"""Mistake: Pre-LN adds the normalized x back, x_norm + sublayer(x_norm), instead of x."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import PreNormResidual as Reference

EXPECT = "test_residual_path_is_x"
ALSO = "test_prenorm_residual"


class PreNormResidual(Reference):
    def forward(self, x):
        x = self.norm(x)
        return x + self.sublayer(x)


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class TransformerEncoderBlock(reference.TransformerEncoderBlock):
    """Unchanged from the reference."""
