"""Mistake: subtracts the mean first (LayerNorm's variance), instead of dividing by the RMS."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_no_mean_centring"
ALSO = "test_forward_matches_torch, test_gradients_match"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        eps = torch.finfo(torch.float32).eps if self.eps is None else self.eps
        centred = x - x.mean(dims, keepdim=True)
        y = centred / torch.sqrt(centred.square().mean(dims, keepdim=True) + eps)
        return y if self.weight is None else y * self.weight
