"""Mistake: the shape check asks for more dims than normalized_shape has, so an input without
batch dims (one sample, as torch takes it) raises."""

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_forward_matches_torch"


class LayerNorm(Reference):
    def forward(self, x):
        if x.dim() <= len(self.normalized_shape):
            raise RuntimeError(f"expected input with batch dims, got input of size {list(x.shape)}")
        return super().forward(x)
