"""Mistake (torch parity): no power steps at construction, as torch's older hook version: u and
v start as random unit vectors, not torch's after its 15 steps."""

import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_initialised_like_torch"


class SpectralNorm(Reference):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        nn.Module.__init__(self)
        if n_power_iterations < 1:
            raise ValueError(f"n_power_iterations must be positive, got {n_power_iterations}")
        self.n_power_iterations, self.dim, self.eps = n_power_iterations, dim, eps
        if weight.ndim > 1:
            w = self._matrix(weight)
            u, v = w.new_empty(w.shape[0]).normal_(), w.new_empty(w.shape[1]).normal_()
            self.register_buffer("_u", F.normalize(u, dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=eps))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
