"""Mistake: the weight reshaped to (weight.shape[dim], -1) without moving dim to the front, which
scrambles the entries for dim=1."""

from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_dim_moved_to_front"


class SpectralNorm(Reference):
    def _matrix(self, weight):
        return weight.reshape(weight.shape[self.dim], -1)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
