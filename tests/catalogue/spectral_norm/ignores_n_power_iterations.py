"""Mistake: one power step per training forward, whatever n_power_iterations says."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_n_power_iterations"


class SpectralNorm(Reference):
    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        w = self._matrix(weight)
        if self.training:
            self._power_method(w, 1)
        u, v = self._u.clone(), self._v.clone()
        return weight / torch.dot(u, torch.mv(w, v))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
