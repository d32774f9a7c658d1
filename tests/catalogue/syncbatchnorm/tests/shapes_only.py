"""A weak attempt: tests only that the output has the input's shape and dtype, on one process
and on two ranks, never a value."""

import torch

CATCHES = "assumes_process_group, sync_on_rank0_only"
FALSE_ALARMS = ""


def test_output_shape(kata):
    """On one process, the output has the input's shape and dtype."""
    torch.manual_seed(0)
    for shape in ((4, 3), (4, 3, 5), (2, 3, 4, 4)):
        x = torch.randn(shape)
        y = kata.SyncBatchNorm(3)(x)
        assert y.shape == x.shape and y.dtype == x.dtype


def test_output_shape_on_ranks(kata, ranks):
    """On two ranks, each rank's output has its input's shape."""
    torch.manual_seed(0)
    xs = [torch.randn(4, 3, 5), torch.randn(2, 3, 5)]

    def step(rank, world_size):
        return kata.SyncBatchNorm(3)(xs[rank])

    for x, y in zip(xs, ranks(step, world_size=2)):
        assert y.shape == x.shape
