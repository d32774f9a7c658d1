"""Mistake: eps is ignored: every vector is divided by its norm, however short."""

import torch
from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_eps_used"


def normalize(x):
    return x / x.norm()


class SpectralNorm(Reference):
    @torch.no_grad()
    def _power_method(self, w, n):
        for _ in range(n):
            self._u = normalize(torch.mv(w, self._v))
            self._v = normalize(torch.mv(w.mT, self._u))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
