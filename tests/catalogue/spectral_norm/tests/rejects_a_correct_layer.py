"""A learner's tests of SpectralNorm with one over-strict test: it expects torch's order of the
power step (u from v, then v from u) in a training forward, where the contract allows v first
too, as torch's older hook does. The other two tests are sound."""

import torch
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm as torch_spectral_norm

CATCHES = "v_from_w, u_v_parameters, vectors_on_cpu, frobenius_norm"
FALSE_ALARMS = "test_training_forward_matches_torch"


def test_buffers(kata):
    """_u and _v are buffers of shapes (out,) and (in,), not parameters."""
    sn = kata.SpectralNorm(torch.randn(3, 5))
    buffers = dict(sn.named_buffers())
    assert buffers["_u"].shape == (3,) and buffers["_v"].shape == (5,)
    assert list(sn.parameters()) == []


def test_eval_divides_by_u_w_v(kata):
    """In eval mode the weight is divided by uᵀ W v of the stored vectors."""
    torch.manual_seed(0)
    w = torch.randn(3, 5, dtype=torch.float64)
    sn = kata.SpectralNorm(w).eval()
    u, v = sn._u.clone(), sn._v.clone()
    torch.testing.assert_close(sn(w), w / (u @ w @ v))


def test_training_forward_matches_torch(kata):
    """Two training forwards give torch's normalized weights, from the same state_dict and a
    fresh u and v."""
    torch.manual_seed(0)
    ref = torch_spectral_norm(nn.Linear(5, 3))
    sn = ref.parametrizations.weight[0]
    with torch.no_grad():  # a fresh start, far from the singular vectors
        sn._u.copy_(torch.nn.functional.normalize(torch.randn(3), dim=0))
        sn._v.copy_(torch.nn.functional.normalize(torch.randn(5), dim=0))
    mine = kata.spectral_norm(nn.Linear(5, 3))
    mine.load_state_dict(ref.state_dict())
    for _ in range(2):
        torch.testing.assert_close(mine.weight, ref.weight)
