"""Mistake: running_mean made with torch.empty and never zeroed. It holds whatever the memory
held: often garbage, sometimes zeros, so the verdict would depend on the allocator's history.
During a check new memory reads as NaN, and this fails on every run.
"""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_buffers"


class EmptyMean:
    def __init__(self, num_features, *args, **kwargs):
        super().__init__(num_features, *args, **kwargs)
        if self.track_running_stats:
            self.register_buffer("running_mean", torch.empty(num_features))


class BatchNorm1d(EmptyMean, Reference1d):
    pass


class BatchNorm2d(EmptyMean, Reference2d):
    pass
