"""Mistake: normalizes with the unbiased variance of the global batch (divide by N - 1)."""

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_global_biased_variance"
ALSO = (
    "test_variance_includes_spread_between_ranks, "
    "test_uneven_batch_sizes, "
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
        dims, shape, c = [0, *range(2, x.dim())], [1, -1] + [1] * (x.dim() - 2), x.size(1)
        local = torch.cat([x.sum(dims), (x * x).sum(dims), x.new_tensor([x.numel() / c])])
        stats = dist_fn.all_reduce(local, group=self.process_group)
        count = stats[-1]
        mean = stats[:c] / count
        var = (stats[c : 2 * c] - count * mean * mean) / (count - 1)  # the sample variance
        if self.track_running_stats:
            self.num_batches_tracked += 1
            m = 1 / self.num_batches_tracked.item() if self.momentum is None else self.momentum
            with torch.no_grad():
                self.running_mean.lerp_(mean, m)
                self.running_var.lerp_(var, m)
        y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
