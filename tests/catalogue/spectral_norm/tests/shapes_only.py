"""A learner's first tests of SpectralNorm: only the output's shape and dtype, for a Linear and
a Conv2d weight. Every layer that returns a tensor like its weight passes, whatever σ is."""

import torch

CATCHES = "v_from_w"
FALSE_ALARMS = ""


def test_output_shape(kata):
    """forward(weight) has the weight's shape, for a Linear and a Conv2d weight."""
    torch.manual_seed(0)
    for shape in ((3, 5), (4, 2, 3, 3)):
        w = torch.randn(shape)
        assert kata.SpectralNorm(w)(w).shape == w.shape


def test_output_dtype(kata):
    """forward(weight) has the weight's dtype."""
    torch.manual_seed(0)
    w = torch.randn(3, 5)
    assert kata.SpectralNorm(w)(w).dtype == torch.float32
