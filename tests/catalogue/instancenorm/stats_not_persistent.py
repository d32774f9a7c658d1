"""Mistake: running statistics registered with persistent=False, so checkpoints lose them."""

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_state_dict_round_trip"


class Mistake:
    def __init__(
        self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False
    ):
        super().__init__(num_features, eps, momentum, affine, False)
        self.track_running_stats = track_running_stats
        if track_running_stats:
            for name, value in (
                ("running_mean", torch.zeros(num_features)),
                ("running_var", torch.ones(num_features)),
                ("num_batches_tracked", torch.tensor(0, dtype=torch.long)),
            ):
                del self._buffers[name]
                self.register_buffer(name, value, persistent=False)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
