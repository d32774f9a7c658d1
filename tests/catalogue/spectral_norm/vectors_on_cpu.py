"""Mistake: u and v drawn with torch.randn(n): float32 on the CPU, whatever the weight's dtype and
device."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_follows_weight"


class SpectralNorm(Reference):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        nn.Module.__init__(self)
        if n_power_iterations < 1:
            raise ValueError(f"n_power_iterations must be positive, got {n_power_iterations}")
        self.n_power_iterations, self.dim, self.eps = n_power_iterations, dim, eps
        if weight.ndim > 1:
            h, w = self._matrix(weight).shape
            self.register_buffer("_u", F.normalize(torch.randn(h), dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(torch.randn(w), dim=0, eps=eps))
            self._power_method(self._matrix(weight.detach()), 15)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
