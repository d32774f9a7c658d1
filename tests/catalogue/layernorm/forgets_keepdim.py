"""Mistake: reduces without keepdim, so the statistics of shape (N,) do not broadcast against x.

The first forward check crashes with a broadcast error: the report hints at keeping the reduced
dims (the stub's pitfall), not at the check's own subject.
"""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_output_like_input"
ALSO = (
    "test_input_unmodified, "
    "test_from_scratch, "
    "test_vectorized, "
    "test_statistics_per_sample, "
    "test_same_in_eval_mode, "
    "test_constant_input, "
    "test_eps_inside_sqrt, "
    "test_multidim_normalized_shape, "
    "test_no_elementwise_affine, "
    "test_numerically_stable, "
    "test_follows_device, "
    "test_forward_matches_torch, "
    "test_gradients_match"
)


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims)
        var = ((x - mean) ** 2).mean(dims)
        y = (x - mean) / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y
