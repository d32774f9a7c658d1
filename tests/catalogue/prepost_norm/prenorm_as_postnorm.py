"""Mistake: PreNormResidual is wired as Post-LN, normalizing the sum instead of the input."""

from solutions.prepost_norm import PostNormResidual, TransformerEncoderBlock  # noqa: F401
from solutions.prepost_norm import PreNormResidual as Reference

EXPECT = "test_prenorm_residual"


class PreNormResidual(Reference):
    def forward(self, x):
        return self.norm(x + self.sublayer(x))
