"""Mistake: parameters named gamma and beta, so torch.nn.LayerNorm checkpoints do not load."""

import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        self.normalized_shape = (
            (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        )
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(self.normalized_shape)) if elementwise_affine else None
        self.beta = (
            nn.Parameter(torch.zeros(self.normalized_shape))
            if elementwise_affine and bias
            else None
        )

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims, keepdim=True)
        var = x.var(dims, keepdim=True, unbiased=False)
        y = (x - mean) / torch.sqrt(var + self.eps)
        return y if self.gamma is None else y * self.gamma + (0 if self.beta is None else self.beta)


EXPECT = "test_parameters"
ALSO = "test_state_dict_round_trip, test_no_elementwise_affine"
