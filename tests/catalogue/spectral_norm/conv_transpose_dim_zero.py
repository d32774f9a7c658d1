"""Mistake (torch parity): spectral_norm defaults to dim=0 for every module, a ConvTranspose's
input channels included."""

from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_conv_transpose_default_dim"


SpectralNorm = Reference


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    dim = 0 if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
