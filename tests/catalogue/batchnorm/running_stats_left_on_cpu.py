"""Mistake: running statistics are plain attributes, so .to("cuda") leaves them on the CPU.

They are put in the state_dict by hand, so a checkpoint still loads; only the device and
dtype moves miss them.
"""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_buffers"
ALSO = "test_to_dtype, test_follows_device"


class CpuStats:
    def __init__(self, num_features, *args, **kwargs):
        super().__init__(num_features, *args, **kwargs)
        if self.track_running_stats:
            del self.running_mean, self.running_var
            self.running_mean = torch.zeros(num_features)
            self.running_var = torch.ones(num_features)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        if self.track_running_stats:
            destination[prefix + "running_mean"] = self.running_mean
            destination[prefix + "running_var"] = self.running_var

    def _load_from_state_dict(self, state_dict, prefix, *args):
        if self.track_running_stats:
            for name in ("running_mean", "running_var"):
                if prefix + name in state_dict:
                    getattr(self, name).copy_(state_dict.pop(prefix + name))
        super()._load_from_state_dict(state_dict, prefix, *args)


class BatchNorm1d(CpuStats, Reference1d):
    pass


class BatchNorm2d(CpuStats, Reference2d):
    pass
