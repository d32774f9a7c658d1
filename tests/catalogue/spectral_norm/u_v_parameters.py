"""Mistake: u and v are nn.Parameters with requires_grad=False, as in a popular SNGAN port
(christiancosgrove/pytorch-spectral-normalization-gan): an optimizer built from
model.parameters() holds them, and its weight decay shrinks them."""

from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_buffers"


class SpectralNorm(Reference):
    def register_buffer(self, name, tensor, persistent=True):
        self.register_parameter(name, nn.Parameter(tensor, requires_grad=False))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
