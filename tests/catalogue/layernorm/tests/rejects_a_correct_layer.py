"""An over-strict attempt: demands the RuntimeError torch raises for a wrong trailing shape,
where the kata allows a ValueError too; its other tests are sound."""

import pytest
import torch
from torch import nn

CATCHES = (
    "gamma_beta_names, plain_tensor_params, eps_tensor_in_state_dict, forgets_keepdim, "
    "mean_without_keepdim, no_eps"
)
FALSE_ALARMS = "test_wrong_shape_raises_runtime_error"


def test_wrong_shape_raises_runtime_error(kata):
    """An input whose last dim is not normalized_shape raises RuntimeError, as torch's does."""
    with pytest.raises(RuntimeError):
        kata.LayerNorm(8)(torch.randn(4, 5))


def test_parameter_names(kata):
    """weight and bias are named and shaped as nn.LayerNorm's."""
    mine, ref = kata.LayerNorm((3, 4)), nn.LayerNorm((3, 4))
    got = {k: v.shape for k, v in mine.state_dict().items()}
    assert got == {k: v.shape for k, v in ref.state_dict().items()}


def test_constant_row_is_finite(kata):
    """A constant row gives a finite output."""
    assert torch.isfinite(kata.LayerNorm(8)(torch.full((2, 8), 3.0))).all()
