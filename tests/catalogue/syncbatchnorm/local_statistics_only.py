"""Mistake: plain BatchNorm on every rank: each normalizes with its own batch's statistics
(what SyncBatchNorm exists to fix)."""

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_global_mean"
ALSO = (
    "test_global_biased_variance, "
    "test_variance_includes_spread_between_ranks, "
    "test_uneven_batch_sizes, "
    "test_running_stats_global_and_identical, "
    "test_input_gradients, "
    "test_parameter_gradients_are_local, "
    "test_rank_with_batch_of_one, "
    "test_process_group, "
    "test_matches_batchnorm_on_the_global_batch"
)


class SyncBatchNorm(Reference):
    def forward(self, x):
        momentum = 0.0
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            m = self.momentum
            momentum = 1.0 / float(self.num_batches_tracked) if m is None else m
        return self._local(x, momentum)
