"""Mistake: running statistics registered with persistent=False, so checkpoints lose them.

They still move with .to() and work in eval mode, but the state_dict has no running_mean or
running_var, and a model trained with them forgets its statistics when saved and loaded.
"""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_state_dict_round_trip"


class NotPersistent:
    def __init__(self, num_features, *args, **kwargs):
        super().__init__(num_features, *args, **kwargs)
        if self.track_running_stats:
            self.register_buffer("running_mean", torch.zeros(num_features), persistent=False)
            self.register_buffer("running_var", torch.ones(num_features), persistent=False)


class BatchNorm1d(NotPersistent, Reference1d):
    pass


class BatchNorm2d(NotPersistent, Reference2d):
    pass
