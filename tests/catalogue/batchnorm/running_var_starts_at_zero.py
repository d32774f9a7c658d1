"""Mistake: running_var starts at zeros instead of ones (a fresh layer in eval divides by √eps)."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_buffers"


class ZeroVar:
    def __init__(self, num_features, *args, **kwargs):
        super().__init__(num_features, *args, **kwargs)
        if self.track_running_stats:
            self.register_buffer("running_var", torch.zeros(num_features))


class BatchNorm1d(ZeroVar, Reference1d):
    pass


class BatchNorm2d(ZeroVar, Reference2d):
    pass
