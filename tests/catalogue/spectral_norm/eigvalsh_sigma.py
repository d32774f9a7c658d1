"""Mistake: σ as the square root of WᵀW's largest eigenvalue, from torch.linalg.eigvalsh."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_from_scratch"
ALSO = (
    "test_no_iterations_in_eval, "
    "test_divides_by_sigma, "
    "test_gradient_through_sigma_only, "
    "test_forward_matches_torch, "
    "test_gradients_match"
)


class SpectralNorm(Reference):
    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        w = self._matrix(weight)
        if self.training:
            self._power_method(w, self.n_power_iterations)
        return weight / torch.linalg.eigvalsh(w.mT @ w)[-1].sqrt()


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
