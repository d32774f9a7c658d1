"""Mistake: the power step leaves u unnormalized, u = W v; only v is normalized."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_unit_vectors"
ALSO = "test_converges_to_top_singular_value, test_forward_matches_torch, test_gradients_match"


class SpectralNorm(Reference):
    @torch.no_grad()
    def _power_method(self, w, n):
        for _ in range(n):
            self._u = torch.mv(w, self._v)
            self._v = F.normalize(torch.mv(w.mT, self._u), dim=0, eps=self.eps)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
