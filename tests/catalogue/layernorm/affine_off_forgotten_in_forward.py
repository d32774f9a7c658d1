"""Mistake: forward always scales and shifts, even with elementwise_affine=False, where weight
and bias are None: it raises. Checks that build the layer without affine to see the
normalization alone hand that error to test_no_elementwise_affine."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_no_elementwise_affine"
ALSO = "test_biased_variance, test_eps_inside_sqrt, test_numerically_stable"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims, keepdim=True)
        var = (x - mean).square().mean(dims, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias
