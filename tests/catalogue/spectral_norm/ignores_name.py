"""Mistake: spectral_norm always normalizes module.weight, whatever name says."""

from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_spectral_norm_function"

SpectralNorm = Reference


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(module.weight, n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, "weight", sn)
