"""Mistake: divides x by its (biased) standard deviation instead of its root mean square.

On rows of mean 0 the two agree: the check that x keeps its mean tells them apart.
"""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_no_mean_centring"
ALSO = "test_forward_matches_torch, test_gradients_match"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        eps = torch.finfo(torch.float32).eps if self.eps is None else self.eps
        std = torch.sqrt(x.var(dims, keepdim=True, unbiased=False) + eps)
        y = x / std
        return y if self.weight is None else y * self.weight
