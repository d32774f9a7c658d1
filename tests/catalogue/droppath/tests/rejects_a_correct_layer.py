"""An over-strict attempt: demands the exact mask of one way of drawing it (torch.rand(N, 1)
compared with the keep probability) under the same seed, where the kata asks only for a fresh
Bernoulli draw per sample from torch's generator; its other tests are sound."""

import torch

CATCHES = "scales_in_eval, per_element_mask"
FALSE_ALARMS = "test_same_mask_as_rand_under_seed"


def test_same_mask_as_rand_under_seed(kata):
    """Under the same seed, drop_path keeps the samples torch.rand(N, 1) < 1 - p keeps."""
    p = 0.3
    x = torch.rand(16, 4) + 0.5
    torch.manual_seed(0)
    want = x * (torch.rand(16, 1) < 1 - p) / (1 - p)
    torch.manual_seed(0)
    torch.testing.assert_close(kata.drop_path(x, p, True), want)


def test_eval_is_identity(kata):
    """In eval mode the output equals the input."""
    torch.manual_seed(0)
    x = torch.randn(8, 4)
    torch.testing.assert_close(kata.DropPath(0.3).eval()(x), x)


def test_whole_samples(kata):
    """Each sample is dropped whole or kept whole."""
    torch.manual_seed(0)
    y = kata.DropPath(0.5)(torch.rand(64, 8) + 0.5)
    zeros = y == 0
    assert (zeros.all(1) | ~zeros.any(1)).all()
