"""Mistake: the affine parameters are called gamma and beta, not weight and bias like torch's.

A checkpoint of nn.GroupNorm does not load, and the layer's parameters are not where torch
code looks for them; what forward computes with them is right.
"""

import torch
from torch import nn

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_parameters"
ALSO = "test_state_dict_round_trip, test_no_affine"


class GroupNorm(Reference):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__(num_groups, num_channels, eps, affine=False)
        self.affine = affine
        del self.weight, self.bias
        self.gamma = nn.Parameter(torch.ones(num_channels)) if affine else None
        self.beta = nn.Parameter(torch.zeros(num_channels)) if affine else None

    def forward(self, x):
        affine, self.affine = self.affine, False  # the reference's own affine reads weight
        try:
            y = super().forward(x)
        finally:
            self.affine = affine
        if self.gamma is not None:
            shape = (1, -1) + (1,) * (x.dim() - 2)
            y = (y * self.gamma.view(shape) + self.beta.view(shape)).to(x.dtype)
        return y
