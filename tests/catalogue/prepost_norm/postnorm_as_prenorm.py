"""Mistake: PostNormResidual is wired as Pre-LN, x + sublayer(norm(x)): the sum is raw."""

from solutions.prepost_norm import PostNormResidual as Reference
from solutions.prepost_norm import PreNormResidual, TransformerEncoderBlock  # noqa: F401

EXPECT = "test_postnorm_residual"


class PostNormResidual(Reference):
    def forward(self, x):
        return x + self.sublayer(self.norm(x))
