"""Mistake: spectral_norm hands the work to torch's own
torch.nn.utils.parametrizations.spectral_norm."""

from torch.nn.utils import parametrizations

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_from_scratch"
ALSO = "test_spectral_norm_function"

SpectralNorm = Reference


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    return parametrizations.spectral_norm(module, name, n_power_iterations, eps, dim)
