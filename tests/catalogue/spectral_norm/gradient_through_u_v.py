"""Mistake: the power step runs with autograd on, and σ uses the u and v it computed, so the
gradient flows through the iterations (only the buffers get detached copies)."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_gradient_through_sigma_only"
ALSO = "test_gradients_match"


class SpectralNorm(Reference):
    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        w = self._matrix(weight)
        u, v = self._u, self._v
        if self.training:
            for _ in range(self.n_power_iterations):
                u = F.normalize(torch.mv(w, v), dim=0, eps=self.eps)
                v = F.normalize(torch.mv(w.mT, u), dim=0, eps=self.eps)
            self._u, self._v = u.detach(), v.detach()
        return weight / torch.dot(u, torch.mv(w, v))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
