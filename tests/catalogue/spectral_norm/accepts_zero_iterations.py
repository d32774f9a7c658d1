"""Mistake (torch parity): n_power_iterations=0 is accepted, and the estimate then never moves
from its start."""

from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_rejects_nonpositive_iterations"


class SpectralNorm(Reference):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__(weight, max(n_power_iterations, 1), dim, eps)
        self.n_power_iterations = n_power_iterations


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
