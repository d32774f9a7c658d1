"""Mistake (torch parity): dim brought to the front by swapping it with dim 0, which reorders
the other dims for dim=2: the same σ in the end, but v's entries in another order than torch's."""

from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_dim_keeps_the_others_in_order"


class SpectralNorm(Reference):
    def _matrix(self, weight):
        return weight.transpose(0, self.dim).flatten(1)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
