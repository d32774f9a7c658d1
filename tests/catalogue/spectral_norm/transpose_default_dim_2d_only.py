"""Mistake: the ConvTranspose default dim checks nn.ConvTranspose2d only: a ConvTranspose1d or
ConvTranspose3d gets dim=0, its input channels."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

EXPECT = "test_conv_transpose_default_dim"


class SpectralNorm(nn.Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        if n_power_iterations < 1:
            raise ValueError("need at least one power iteration")
        self.n_power_iterations, self.dim, self.eps = n_power_iterations, dim, eps
        if weight.ndim > 1:
            W = self._mat(weight)
            self.register_buffer(
                "_u", F.normalize(W.new_empty(W.shape[0]).normal_(), dim=0, eps=eps)
            )
            self.register_buffer(
                "_v", F.normalize(W.new_empty(W.shape[1]).normal_(), dim=0, eps=eps)
            )
            self._power(W, 15)

    def _mat(self, weight):
        return weight.movedim(self.dim, 0).flatten(1)

    @torch.no_grad()
    def _power(self, W, n):
        for _ in range(n):
            F.normalize(torch.mv(W, self._v), dim=0, eps=self.eps, out=self._u)
            F.normalize(torch.mv(W.mT, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        W = self._mat(weight)
        if self.training:
            self._power(W, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        return weight / torch.dot(u, torch.mv(W, v))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    if dim is None:
        transposed = nn.ConvTranspose2d
        dim = 1 if isinstance(module, transposed) else 0
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    parametrize.register_parametrization(module, name, sn)
    return module
