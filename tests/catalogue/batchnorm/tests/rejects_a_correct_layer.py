"""An over-strict attempt: demands that a training step updates running_mean in place (the
same tensor object), where the kata allows a buffer reassigned from detached values; its other
tests are sound."""

import torch
from torch import nn

CATCHES = (
    "gamma_beta_names, plain_tensor_running_stats, running_mean_from_empty, "
    "stats_not_persistent, centers_in_place, momentum_backwards, warm_start_first_batch, "
    "momentum_default_from_keras"
)
FALSE_ALARMS = "test_running_mean_updated_in_place"


def test_running_mean_updated_in_place(kata):
    """A training step keeps running_mean the same tensor."""
    layer = kata.BatchNorm2d(3)
    before = layer.running_mean
    layer(torch.randn(4, 3, 2, 2))
    assert layer.running_mean is before


def test_state_dict_keys(kata):
    """The state_dict has nn.BatchNorm2d's keys and shapes."""
    mine, ref = kata.BatchNorm2d(3), nn.BatchNorm2d(3)
    got = {k: v.shape for k, v in mine.state_dict().items()}
    assert got == {k: v.shape for k, v in ref.state_dict().items()}


def test_running_mean_after_one_step(kata):
    """One training step moves running_mean a tenth of the way to the batch mean."""
    torch.manual_seed(0)
    x = torch.randn(8, 3) + 2
    layer = kata.BatchNorm1d(3)
    layer(x)
    torch.testing.assert_close(layer.running_mean, 0.1 * x.mean(0))
