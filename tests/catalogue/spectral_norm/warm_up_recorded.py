"""Mistake: the warm-up power steps in __init__ run while autograd records, reassigning the
buffers: u and v now depend on the weight (a grad_fn), so a backward reaches the weight through
them, and the first in-place power step of a layer made in eval mode breaks that backward."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

EXPECT = "test_buffers"
ALSO = "test_gradients_match"


class SpectralNorm(nn.Module):
    """weight / σ, σ = uᵀ W v estimated by power iteration; u and v are buffers."""

    def __init__(
        self, weight: torch.Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        if n_power_iterations < 1:
            raise ValueError(f"n_power_iterations must be positive, got {n_power_iterations}")
        self.n_power_iterations, self.dim, self.eps = n_power_iterations, dim, eps
        if weight.ndim > 1:  # a vector is simply divided by its norm (forward)
            w = self._matrix(weight)
            u, v = w.new_empty(w.shape[0]).normal_(), w.new_empty(w.shape[1]).normal_()
            self.register_buffer("_u", F.normalize(u, dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=eps))
            for _ in range(15):  # start close to the singular vectors, autograd recording
                self._u = F.normalize(torch.mv(w, self._v), dim=0, eps=eps)
                self._v = F.normalize(torch.mv(w.mT, self._u), dim=0, eps=eps)

    def _matrix(self, weight: torch.Tensor) -> torch.Tensor:
        # dim (the output channels: 1 for a ConvTranspose) to the front, the rest flattened
        return weight.movedim(self.dim, 0).flatten(1)

    @torch.no_grad()
    def _power_method(self, w: torch.Tensor, n: int) -> None:
        for _ in range(n):
            # In place, as torch does: DataParallel's replicas share these buffers' storage.
            F.normalize(torch.mv(w, self._v), dim=0, eps=self.eps, out=self._u)
            F.normalize(torch.mv(w.mT, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        w = self._matrix(weight)
        if self.training:
            self._power_method(w, self.n_power_iterations)
        # Clones: the next forward updates the buffers in place, which this backward reads.
        u, v = self._u.clone(), self._v.clone()
        return weight / torch.dot(u, torch.mv(w, v))


def spectral_norm(
    module: nn.Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> nn.Module:
    """Registers SpectralNorm on module.<name> as a parametrization; returns the module."""
    if dim is None:
        transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    parametrize.register_parametrization(module, name, sn)
    return module
