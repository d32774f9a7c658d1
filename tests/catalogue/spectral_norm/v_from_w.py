"""Mistake: v from W u instead of Wᵀ u, which only has the right length for a square W."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_power_iteration_step"
ALSO = (
    "test_buffers, "
    "test_state_dict_round_trip, "
    "test_from_scratch, "
    "test_follows_weight, "
    "test_unit_vectors, "
    "test_training_forward_iterates, "
    "test_n_power_iterations, "
    "test_no_iterations_in_eval, "
    "test_divides_by_sigma, "
    "test_gradient_through_sigma_only, "
    "test_two_forwards_then_backward, "
    "test_conv_weight_reshape, "
    "test_dim_moved_to_front, "
    "test_eps_used, "
    "test_spectral_norm_function, "
    "test_converges_to_top_singular_value, "
    "test_forward_matches_torch, "
    "test_gradients_match"
)


class SpectralNorm(Reference):
    @torch.no_grad()
    def _power_method(self, w, n):
        for _ in range(n):
            F.normalize(torch.mv(w, self._v), dim=0, eps=self.eps, out=self._u)
            F.normalize(torch.mv(w, self._u), dim=0, eps=self.eps, out=self._v)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
