"""Correct, adapted from torch's older hook version, SpectralNorm.compute_weight in
torch/nn/utils/spectral_norm.py: each training step updates v from u first, then u from v, in
place with out= and then cloned; W is reshaped to (height, -1) after a permute, and σ is
torch.dot(u, torch.mv(W, v)). As a parametrization, with the construction torch's
parametrizations version has (draws, then 15 steps, u first), whose buffers it keeps."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

EXPECT = "pass"


class SpectralNorm(nn.Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, got {n_power_iterations}"
            )
        self.n_power_iterations, self.dim, self.eps = n_power_iterations, dim, eps
        if weight.ndim > 1:
            with torch.no_grad():
                weight_mat = self.reshape_weight_to_matrix(weight)
                h, w = weight_mat.size()
                u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=eps)
                v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=eps)
                for _ in range(15):
                    u = F.normalize(torch.mv(weight_mat, v), dim=0, eps=eps)
                    v = F.normalize(torch.mv(weight_mat.t(), u), dim=0, eps=eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)

    def reshape_weight_to_matrix(self, weight):
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(
                self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim]
            )
        height = weight_mat.size(0)
        return weight_mat.reshape(height, -1)

    def forward(self, weight):
        if weight.ndim == 1:
            return weight / weight.norm().clamp_min(self.eps)
        weight_mat = self.reshape_weight_to_matrix(weight)
        u, v = self._u, self._v
        if self.training:
            with torch.no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(torch.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(torch.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone(memory_format=torch.contiguous_format)
                v = v.clone(memory_format=torch.contiguous_format)
        sigma = torch.dot(u, torch.mv(weight_mat, v))
        return weight / sigma


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    if dim is None:
        if isinstance(module, (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)):
            dim = 1
        else:
            dim = 0
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    parametrize.register_parametrization(module, name, sn)
    return module
