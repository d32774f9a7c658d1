"""Mistake: the residual wrappers add into x in place (x += sublayer(...)), overwriting the
caller's tensor. What the sublayer was handed is judged against x as it was: the checks of
the wiring pass."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_input_unmodified"
ALSO = "test_gradients_match"


class PreNormResidual(reference.PreNormResidual):
    def forward(self, x):
        x += self.sublayer(self.norm(x))
        return x


class PostNormResidual(reference.PostNormResidual):
    def forward(self, x):
        x += self.sublayer(x)
        return self.norm(x)


class TransformerEncoderBlock(Reference):
    """Unchanged from the reference."""
