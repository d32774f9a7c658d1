"""Mistake: the running statistics are non-persistent buffers ("statistics, not weights"), so
checkpoints lose them and nn.SyncBatchNorm's state_dict does not load."""

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_state_dict_round_trip"


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
        super().__init__(num_features, eps, momentum, affine, track_running_stats, process_group)
        if track_running_stats:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, getattr(self, name), persistent=False)
