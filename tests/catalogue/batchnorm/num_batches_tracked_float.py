"""Mistake: num_batches_tracked is a float tensor, not torch.long like torch's checkpoint entry."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_buffers"
ALSO = "test_state_dict_round_trip"


class FloatCount:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.track_running_stats:
            self.register_buffer("num_batches_tracked", torch.tensor(0.0))


class BatchNorm1d(FloatCount, Reference1d):
    pass


class BatchNorm2d(FloatCount, Reference2d):
    pass
