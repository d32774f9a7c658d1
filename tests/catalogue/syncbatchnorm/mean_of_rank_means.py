"""Mistake: all-reduces the ranks' means (and mean squared deviations) but not their counts,
then divides by the number of ranks: right only when every batch has the same size."""

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_uneven_batch_sizes"
ALSO = (
    "test_running_stats_global_and_identical, "
    "test_input_gradients, "
    "test_parameter_gradients_are_local, "
    "test_rank_with_batch_of_one, "
    "test_process_group, "
    "test_matches_batchnorm_on_the_global_batch"
)


class SyncBatchNorm(Reference):
    def forward(self, x):
        synced = (
            self.training
            and dist.is_available()
            and dist.is_initialized()
            and dist.get_world_size(self.process_group) > 1
        )
        if not synced:
            return super().forward(x)
        dims, shape = [0, *range(2, x.dim())], [1, -1] + [1] * (x.dim() - 2)
        world = dist.get_world_size(self.process_group)
        mean = dist_fn.all_reduce(x.mean(dims), group=self.process_group) / world
        centred = x - mean.view(shape)
        var = dist_fn.all_reduce(centred.square().mean(dims), group=self.process_group) / world
        if self.track_running_stats:
            count = x.numel() // x.size(1) * world
            self.num_batches_tracked += 1
            m = 1 / self.num_batches_tracked.item() if self.momentum is None else self.momentum
            with torch.no_grad():
                self.running_mean.lerp_(mean, m)
                self.running_var.lerp_(var * count / (count - 1), m)
        y = centred / torch.sqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
