"""Mistake: divides by the standard deviation without eps, so a constant row gives 0/0 = NaN."""

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_constant_input"
ALSO = "test_eps_inside_sqrt, test_forward_matches_torch"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        y = (x - x.mean(dims, keepdim=True)) / x.std(dims, keepdim=True, unbiased=False)
        return (
            y if self.weight is None else y * self.weight + (0 if self.bias is None else self.bias)
        )
