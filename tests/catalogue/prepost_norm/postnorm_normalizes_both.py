"""Mistake: Post-LN normalizes the residual and the input: norm(x) + sublayer(norm(x))."""

from solutions.prepost_norm import PostNormResidual as Reference
from solutions.prepost_norm import PreNormResidual, TransformerEncoderBlock  # noqa: F401

EXPECT = "test_postnorm_residual"


class PostNormResidual(Reference):
    def forward(self, x):
        h = self.norm(x)
        return h + self.sublayer(h)
