"""Mistake: the affine parameters are called gamma and beta, not weight and bias like torch's."""

import torch
from torch import nn

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_parameters"
ALSO = "test_state_dict_round_trip"


class Mistake:
    def __init__(
        self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False
    ):
        super().__init__(num_features, eps, momentum, False, track_running_stats)
        self.affine = affine
        if affine:
            self.gamma = nn.Parameter(torch.ones(num_features))
            self.beta = nn.Parameter(torch.zeros(num_features))

    def _normalize(self, x):
        affine, self.affine = self.affine, False  # the reference's own affine reads weight
        try:
            y = super()._normalize(x)
        finally:
            self.affine = affine
        if self.affine:
            shape = (1, -1) + (1,) * (x.dim() - 2)
            y = (y * self.gamma.view(shape) + self.beta.view(shape)).to(x.dtype)
        return y


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
