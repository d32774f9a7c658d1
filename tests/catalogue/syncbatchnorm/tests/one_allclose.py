"""A weak attempt: one comparison with F.batch_norm on the global batch, default options, two
ranks with batches of the same size, in training mode."""

import torch
import torch.nn.functional as F

CATCHES = (
    "weight_uniform_init, sync_on_rank0_only, local_statistics_only, unbiased_variance, "
    "averages_rank_variances"
)
FALSE_ALARMS = ""


def test_matches_batchnorm_on_the_global_batch(kata, ranks):
    """Each rank's output is its part of F.batch_norm on both ranks' batches together."""
    torch.manual_seed(0)
    xs = [torch.randn(4, 3), torch.randn(4, 3)]

    def step(rank, world_size):
        return kata.SyncBatchNorm(3)(xs[rank])

    y = torch.cat(ranks(step, world_size=2))
    torch.testing.assert_close(y, F.batch_norm(torch.cat(xs), None, None, training=True))
