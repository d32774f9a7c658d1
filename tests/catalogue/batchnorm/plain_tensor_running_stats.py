"""Mistake: running statistics kept as plain tensor attributes, so .to() skips them."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_buffers"
ALSO = "test_state_dict_round_trip, test_to_dtype, test_follows_device"


class PlainStats:
    def __init__(self, num_features, *args, **kwargs):
        super().__init__(num_features, *args, **kwargs)
        if self.track_running_stats:
            del self.running_mean, self.running_var
            self.running_mean = torch.zeros(num_features)
            self.running_var = torch.ones(num_features)


class BatchNorm1d(PlainStats, Reference1d):
    pass


class BatchNorm2d(PlainStats, Reference2d):
    pass
