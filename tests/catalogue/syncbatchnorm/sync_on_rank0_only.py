"""Mistake: only rank 0 all-reduces the global batch size (to log it): the other ranks never
join that collective, a deadlock."""

import torch
import torch.distributed as dist

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_every_rank_joins_the_same_collectives"
ALSO = (
    "test_communicates_statistics_only, "
    "test_global_mean, "
    "test_global_biased_variance, "
    "test_variance_includes_spread_between_ranks, "
    "test_uneven_batch_sizes, "
    "test_running_stats_global_and_identical, "
    "test_input_gradients, "
    "test_parameter_gradients_are_local, "
    "test_rank_with_batch_of_one, "
    "test_process_group, "
    "test_eps_inside_sqrt, "
    "test_matches_batchnorm_on_the_global_batch"
)
SAYS = "deadlock: ranks 1, 2 and 3 never joined the all_reduce in forward"


class SyncBatchNorm(Reference):
    def forward(self, x):
        y = super().forward(x)
        if self.training and dist.is_available() and dist.is_initialized():
            if dist.get_rank() == 0:  # rank 0 does the logging
                total = torch.tensor([float(x.size(0))])
                dist.all_reduce(total, group=self.process_group)
                self.global_batch_size = int(total.item())
        return y
