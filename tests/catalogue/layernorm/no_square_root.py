"""Mistake: divides by var + eps, not by its square root. The variance is the biased one and
eps sits with it: the checks of the divisor and of eps hand the mistake to the formula's."""

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_forward_matches_torch"
ALSO = "test_biased_variance, test_eps_inside_sqrt, test_gradients_match"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims, keepdim=True)
        var = (x - mean).square().mean(dims, keepdim=True)
        y = (x - mean) / (var + self.eps)
        if self.weight is not None:
            y = y * self.weight
        return y if self.bias is None else y + self.bias
