"""Mistake (torch parity): eps added to the norm, x / (‖x‖ + ε), as the original SNGAN code's
_l2normalize (pfnet-research/sngan_projection) and its PyTorch ports do; torch's F.normalize
takes x / max(‖x‖, ε). The same for any ordinary weight, but not where ‖x‖ is near ε."""

import torch
from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_eps_like_torch"


def l2normalize(x, eps):
    return x / (x.norm() + eps)


class SpectralNorm(Reference):
    @torch.no_grad()
    def _power_method(self, w, n):
        for _ in range(n):
            self._u = l2normalize(torch.mv(w, self._v), self.eps)
            self._v = l2normalize(torch.mv(w.mT, self._u), self.eps)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
