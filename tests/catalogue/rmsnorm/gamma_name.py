"""Mistake: the gain is a parameter named gamma (the paper's letter), not torch's weight."""

import torch
from torch import nn

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_parameters"
ALSO = "test_state_dict_round_trip, test_no_elementwise_affine"


class RMSNorm(Reference):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__(normalized_shape, eps, False)
        self.elementwise_affine = elementwise_affine
        del self.weight
        self.gamma = nn.Parameter(torch.ones(self.normalized_shape)) if elementwise_affine else None

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = xf * torch.rsqrt(xf.square().mean(dims, keepdim=True) + eps)
        return (y if self.gamma is None else y * self.gamma).to(x.dtype)
