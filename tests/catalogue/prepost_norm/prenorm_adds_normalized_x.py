"""Mistake: Pre-LN adds the normalized x back, x_norm + sublayer(x_norm), instead of x."""

from solutions.prepost_norm import PostNormResidual, TransformerEncoderBlock  # noqa: F401
from solutions.prepost_norm import PreNormResidual as Reference

EXPECT = "test_residual_path_is_x"


class PreNormResidual(Reference):
    def forward(self, x):
        x = self.norm(x)
        return x + self.sublayer(x)
