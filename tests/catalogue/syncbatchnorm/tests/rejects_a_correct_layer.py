"""An over-strict attempt: demands that the output come from an autograd.Function (torch's
design), where the kata allows differentiable collectives and autograd's own backward; its
other tests are sound."""

import torch
from torch import nn

CATCHES = "plain_tensor_running_stats, stats_not_persistent, assumes_process_group, forgets_eps"
FALSE_ALARMS = "test_output_from_an_autograd_function"


def test_output_from_an_autograd_function(kata, ranks):
    """In training on two ranks, the output's grad_fn is a custom autograd.Function's."""
    torch.manual_seed(0)
    xs = [torch.randn(4, 3, requires_grad=True), torch.randn(4, 3, requires_grad=True)]

    def step(rank, world_size):
        y = kata.SyncBatchNorm(3)(xs[rank])
        return isinstance(y.grad_fn, torch.autograd.function.BackwardCFunction)

    assert all(ranks(step, world_size=2))


def test_state_dict_keys(kata):
    """The state_dict has nn.SyncBatchNorm's keys and shapes."""
    mine, ref = kata.SyncBatchNorm(3), nn.SyncBatchNorm(3)
    got = {k: v.shape for k, v in mine.state_dict().items()}
    assert got == {k: v.shape for k, v in ref.state_dict().items()}


def test_constant_channel_is_finite(kata):
    """A constant channel gives a finite output on one process."""
    x = torch.randn(6, 3)
    x[:, 0] = 2.0
    assert torch.isfinite(kata.SyncBatchNorm(3)(x)).all()
