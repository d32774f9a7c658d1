"""An over-strict attempt: demands torch's exact error message for a channel count unlike
num_features, where the kata asks only for a ValueError; its other tests are sound."""

import pytest
import torch

CATCHES = "affine_on_by_default, batch_statistics, layernorm_statistics"
FALSE_ALARMS = "test_mismatch_message"


def test_mismatch_message(kata):
    """affine=True with 3 channels for num_features=4 raises torch's ValueError, word for word."""
    layer = kata.InstanceNorm1d(4, affine=True)
    message = r"expected input's size at dim=1 to match num_features \(4\), but got: 3\."
    with pytest.raises(ValueError, match=message):
        layer(torch.randn(2, 3, 5))


def test_no_parameters_by_default(kata):
    """InstanceNorm1d(3) has no parameters: affine is off by default."""
    assert list(kata.InstanceNorm1d(3).parameters()) == []


def test_per_sample_statistics(kata):
    """Each sample's channel comes out with mean 0 over its positions."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8) * 2 + torch.randn(2, 3, 1)
    y = kata.InstanceNorm1d(3)(x)
    torch.testing.assert_close(y.mean(-1), torch.zeros(2, 3), atol=1e-5, rtol=0)
