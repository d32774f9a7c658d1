"""Correct, adapted from BigGAN-PyTorch's power_iteration (ajbrock/BigGAN-PyTorch, layers.py):
u and v as row vectors, v = normalize(u W) and u = normalize(v Wᵀ) under torch.no_grad(),
written back into the buffers with [:] =, and σ = v Wᵀ uᵀ from the new vectors, constants to
autograd. Adapted to torch's contract: one singular value, the buffers _u (h,) and _v (w,),
none of BigGAN's steps in eval, and torch's construction (draws, then 15 steps)."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

EXPECT = "pass"


class SpectralNorm(nn.Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        if n_power_iterations < 1:
            raise ValueError("n_power_iterations must be at least 1")
        self.num_itrs, self.dim, self.eps = n_power_iterations, dim, eps
        if weight.dim() > 1:
            W = self.W_(weight)
            self.register_buffer("_u", F.normalize(torch.randn(W.shape[0]).to(W), dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(torch.randn(W.shape[1]).to(W), dim=0, eps=eps))
            with torch.no_grad():
                for _ in range(15):
                    self._u[:] = F.normalize(torch.matmul(W, self._v), dim=0, eps=eps)
                    self._v[:] = F.normalize(torch.matmul(self._u, W), dim=0, eps=eps)

    def W_(self, weight):
        return torch.movedim(weight, self.dim, 0).contiguous().view(weight.shape[self.dim], -1)

    def forward(self, weight):
        if weight.dim() < 2:
            return F.normalize(weight, dim=0, eps=self.eps)
        W = self.W_(weight)
        u, v = self._u[None], self._v[None]
        with torch.no_grad():
            for _ in range(self.num_itrs if self.training else 0):
                v = F.normalize(torch.matmul(u, W), eps=self.eps)
                u = F.normalize(torch.matmul(v, W.t()), eps=self.eps)
                self._u[:], self._v[:] = u[0], v[0]
        sv = torch.squeeze(torch.matmul(torch.matmul(v, W.t()), u.t()))
        return weight / sv


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    if dim is None:
        dim = int(type(module).__name__.startswith("ConvTranspose"))
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
