"""Mistake: the sublayer runs twice per forward (once just to check the output shape)."""

from solutions import prepost_norm as reference
from solutions.prepost_norm import PostNormResidual as PostReference
from solutions.prepost_norm import PreNormResidual as PreReference

EXPECT = "test_sublayer_called_once"


class PreNormResidual(PreReference):
    def forward(self, x):
        h = self.norm(x)
        assert self.sublayer(h).shape == x.shape, "the sublayer must keep the shape"
        return x + self.sublayer(h)


class PostNormResidual(PostReference):
    def forward(self, x):
        assert self.sublayer(x).shape == x.shape, "the sublayer must keep the shape"
        return self.norm(x + self.sublayer(x))


class TransformerEncoderBlock(reference.TransformerEncoderBlock):
    """Unchanged from the reference."""
