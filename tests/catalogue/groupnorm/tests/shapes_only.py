"""A learner's first tests of GroupNorm: only the output's shape and dtype, on inputs of rank 2,
3 and 4. Every layer that returns a tensor like its input passes, whatever its values."""

import torch

CATCHES = "forgets_to_reshape_back, arguments_swapped"
FALSE_ALARMS = ""


def test_output_shape(kata):
    """The output has the input's shape, for (N, C), (N, C, L) and (N, C, H, W)."""
    torch.manual_seed(0)
    for shape in ((4, 6), (2, 6, 5), (2, 6, 4, 3)):
        x = torch.randn(shape)
        assert kata.GroupNorm(3, 6)(x).shape == x.shape


def test_output_dtype(kata):
    """The output has the input's dtype."""
    torch.manual_seed(0)
    x = torch.randn(2, 6, 5, dtype=torch.float64)
    assert kata.GroupNorm(2, 6).double()(x).dtype == torch.float64
