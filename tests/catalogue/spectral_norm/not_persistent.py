"""Mistake: u and v registered with persistent=False: buffers, but left out of the state_dict,
so a checkpoint restarts the power method from scratch."""

from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_state_dict_round_trip"
ALSO = "test_forward_matches_torch, test_gradients_match"


class SpectralNorm(Reference):
    def register_buffer(self, name, tensor, persistent=True):
        super().register_buffer(name, tensor, persistent=False)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
