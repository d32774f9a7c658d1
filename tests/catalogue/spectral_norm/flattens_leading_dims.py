"""Mistake: the weight flattened as activations are, to (-1, its last dim): right for a Linear's
(out, in), but a Conv2d weight (out, in, kh, kw) becomes (out·in·kh, kw)."""

from torch import nn
from torch.nn.utils import parametrize

from solutions.spectral_norm import SpectralNorm as Reference

EXPECT = "test_conv_weight_reshape"
ALSO = "test_dim_moved_to_front, test_forward_matches_torch, test_gradients_match"


class SpectralNorm(Reference):
    def _matrix(self, weight):
        weight = weight.movedim(self.dim, 0)
        return weight.reshape(-1, weight.shape[-1])


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    transposed = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    dim = (1 if isinstance(module, transposed) else 0) if dim is None else dim
    sn = SpectralNorm(getattr(module, name), n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)
