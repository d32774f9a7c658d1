"""Mistake: the power method runs at construction only: training forwards reuse that u and v."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_training_forward_iterates"
ALSO = (
    "test_power_iteration_step, "
    "test_eps_used, "
    "test_converges_to_top_singular_value, "
    "test_forward_matches_torch, "
    "test_gradients_match"
)


class SpectralNorm(Reference):
    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        w = self._matrix(weight)
        return weight / torch.dot(self._u, torch.mv(w, self._v))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
