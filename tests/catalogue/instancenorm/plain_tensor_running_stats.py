"""Mistake: running statistics kept as plain tensor attributes, not buffers."""

import torch
from torch import nn

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_buffers"
ALSO = "test_state_dict_round_trip, test_to_dtype, test_follows_device"


class Mistake:
    def __init__(
        self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False
    ):
        nn.Module.__init__(self)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = nn.Parameter(torch.ones(num_features)) if affine else None
        self.bias = nn.Parameter(torch.zeros(num_features)) if affine else None
        on = track_running_stats
        self.running_mean = torch.zeros(num_features) if on else None
        self.running_var = torch.ones(num_features) if on else None
        self.num_batches_tracked = torch.tensor(0) if on else None


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
