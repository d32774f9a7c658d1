"""Mistake: the running statistics are plain tensor attributes, not buffers."""

import torch
from torch import nn

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_buffers"
ALSO = "test_state_dict_round_trip, test_follows_device, test_matches_batchnorm_on_the_global_batch"


class SyncBatchNorm(Reference):
    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        process_group=None,
    ):
        nn.Module.__init__(self)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.process_group = process_group
        self.weight = nn.Parameter(torch.ones(num_features)) if affine else None
        self.bias = nn.Parameter(torch.zeros(num_features)) if affine else None
        self.running_mean = torch.zeros(num_features) if track_running_stats else None
        self.running_var = torch.ones(num_features) if track_running_stats else None
        self.num_batches_tracked = torch.tensor(0) if track_running_stats else None
