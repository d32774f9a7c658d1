"""Tests of spectral normalization by power iteration, written as its specification: each test
one property of `kata.SpectralNorm` (a parametrization: forward(weight) is weight / σ) and of
`kata.spectral_norm(module, ...)`, checked against the formulas in float64 and against torch.

u and v are set by the tests (a power step's result depends on where it starts), and a power
step may update u from v first (torch's parametrization) or v from u first (torch's older
hook): the tests accept either order. The interview core first, then torch parity: the start
after the same seed, eps exactly as F.normalize, a 1-D weight, dim=2, n_power_iterations < 1
and ConvTranspose's default dim.
"""

import functools

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import _SpectralNorm
from torch.nn.utils.parametrizations import spectral_norm as torch_spectral_norm

F64 = torch.float64


def unit(n, seed):
    """A random unit vector of length n, float64."""
    g = torch.Generator().manual_seed(seed)
    return F.normalize(torch.randn(n, dtype=F64, generator=g), dim=0)


def with_singular_values(h, w, values, seed=0):
    """A random (h, w) float64 matrix whose singular values are `values` (made once)."""
    return _with_singular_values(h, w, values, seed).clone()


@functools.cache
def _with_singular_values(h, w, values, seed):
    g = torch.Generator().manual_seed(seed)
    left, _ = torch.linalg.qr(torch.randn(h, h, dtype=F64, generator=g))
    right, _ = torch.linalg.qr(torch.randn(w, w, dtype=F64, generator=g))
    k = len(values)
    return left[:, :k] @ torch.diag(torch.tensor(values, dtype=F64)) @ right[:, :k].T


def power_steps(w, u, v, n, eps=1e-12, v_first=False):
    """(u, v) after n power steps on the matrix w: u from v then v from u, or v first."""
    for _ in range(n):
        if v_first:
            v = F.normalize(w.mT @ u, dim=0, eps=eps)
            u = F.normalize(w @ v, dim=0, eps=eps)
        else:
            u = F.normalize(w @ v, dim=0, eps=eps)
            v = F.normalize(w.mT @ u, dim=0, eps=eps)
    return u, v


def holding(sn, u, v):
    """sn with its buffers _u and _v set to u and v."""
    with torch.no_grad():
        sn._u.copy_(u)
        sn._v.copy_(v)
    return sn


def close(a, b, tol=1e-9):
    a, b = a.detach().double(), b.detach().double()
    return a.shape == b.shape and torch.allclose(a, b, rtol=tol, atol=tol)


def expect_steps(sn, w, u0, v0, n, eps=1e-12):
    """sn's u and v are those of n power steps from u0 and v0, in either order."""
    options = [power_steps(w, u0, v0, n, eps, v_first=first) for first in (False, True)]
    assert any(close(sn._u, u) and close(sn._v, v) for u, v in options)


def test_buffers(kata):
    """u and v are registered buffers _u of shape (out,) and _v of shape (in,), not
    parameters, with no autograd history, even when the weight is a Parameter."""
    sn = kata.SpectralNorm(torch.nn.Parameter(torch.randn(3, 5)))
    buffers = dict(sn.named_buffers())
    assert list(sn.parameters()) == []
    assert buffers["_u"].shape == (3,) and buffers["_v"].shape == (5,)
    assert all(b.grad_fn is None and not b.requires_grad for b in buffers.values())


def test_start_with_unit_vectors(kata):
    """u and v start as unit vectors, even for a small weight."""
    torch.manual_seed(0)
    sn = kata.SpectralNorm(torch.randn(3, 5, dtype=F64) * 0.1)
    for t in (sn._u, sn._v):
        assert abs(t.norm().item() - 1) < 1e-6


def test_follows_the_weights_dtype(kata):
    """For a float64 weight, u, v and the output are float64."""
    torch.manual_seed(0)
    w = torch.randn(3, 5, dtype=F64)
    sn = kata.SpectralNorm(w)
    assert sn._u.dtype == F64 and sn._v.dtype == F64
    assert sn(w).dtype == F64


def test_state_dict_round_trip(kata):
    """A spectral-normed Linear's state_dict loads from torch's spectral_norm and into it."""
    torch.manual_seed(0)
    mine = kata.spectral_norm(nn.Linear(5, 3))
    ref = torch_spectral_norm(nn.Linear(5, 3))
    assert {k: v.shape for k, v in mine.state_dict().items()} == {
        k: v.shape for k, v in ref.state_dict().items()
    }
    mine.load_state_dict(ref.state_dict())
    back = torch_spectral_norm(nn.Linear(5, 3))
    back.load_state_dict(mine.state_dict())
    for key, value in ref.state_dict().items():
        torch.testing.assert_close(back.state_dict()[key], value, rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(3, 5), (4, 4)])
def test_one_power_step(kata, shape):
    """One training forward runs one power step from the stored u and v: u ← normalize(W v),
    v ← normalize(Wᵀ u) (or v first), kept in the buffers."""
    torch.manual_seed(0)
    w = torch.randn(shape, dtype=F64)
    u0, v0 = unit(shape[0], 1), unit(shape[1], 2)
    sn = holding(kata.SpectralNorm(w), u0, v0)
    sn(w)
    expect_steps(sn, w, u0, v0, 1)


def test_unit_vectors_after_each_step(kata):
    """u and v have unit length after every training forward, even for a small weight."""
    torch.manual_seed(0)
    w = torch.randn(3, 5, dtype=F64) * 0.1
    sn = holding(kata.SpectralNorm(w), unit(3, 1), unit(5, 2))
    for _ in range(2):
        sn(w)
        for t in (sn._u, sn._v):
            assert abs(t.norm().item() - 1) < 1e-9


def test_every_training_forward_iterates(kata):
    """Each training forward moves u and v on by one step: two forwards are two steps."""
    w = with_singular_values(3, 5, (2.0, 1.8, 1.0))
    u0, v0 = unit(3, 1), unit(5, 2)
    sn = holding(kata.SpectralNorm(w), u0, v0)
    sn(w)
    sn(w)
    expect_steps(sn, w, u0, v0, 2)


def test_n_power_iterations(kata):
    """n_power_iterations=3 runs three power steps per training forward."""
    w = with_singular_values(3, 5, (2.0, 1.8, 1.0))
    u0, v0 = unit(3, 1), unit(5, 2)
    sn = holding(kata.SpectralNorm(w, n_power_iterations=3), u0, v0)
    sn(w)
    expect_steps(sn, w, u0, v0, 3)


def test_divides_by_sigma(kata):
    """The output is weight / σ with σ = uᵀ W v of the new u and v, not the Frobenius norm."""
    torch.manual_seed(0)
    w = torch.randn(3, 5, dtype=F64) * 2
    sn = holding(kata.SpectralNorm(w), unit(3, 1), unit(5, 2))
    out = sn(w)
    sigma = sn._u.double() @ w @ sn._v.double()
    torch.testing.assert_close(out, w / sigma, rtol=1e-9, atol=1e-9)


def test_no_iterations_in_eval(kata):
    """In eval mode u and v stay as stored, and σ = uᵀ W v uses them."""
    w = with_singular_values(3, 5, (2.0, 1.8, 1.0))
    u0, v0 = power_steps(w, unit(3, 1), unit(5, 2), 2)
    sn = holding(kata.SpectralNorm(w), u0, v0).eval()
    out = sn(w)
    torch.testing.assert_close(sn._u, u0, rtol=0, atol=0)
    torch.testing.assert_close(sn._v, v0, rtol=0, atol=0)
    torch.testing.assert_close(out, w / (u0 @ w @ v0), rtol=1e-9, atol=1e-9)


def test_gradient_through_sigma_only(kata):
    """The weight's gradient holds u and v constant: G / σ − (⟨G, W⟩ / σ²) u vᵀ."""
    w = with_singular_values(3, 5, (2.0, 1.8, 1.0))
    sn = holding(kata.SpectralNorm(w), unit(3, 1), unit(5, 2))
    leaf = w.clone().requires_grad_()
    out = sn(leaf)
    u, v = sn._u.detach().double(), sn._v.detach().double()
    sigma = u @ w @ v
    g = torch.randn(3, 5, dtype=F64, generator=torch.Generator().manual_seed(3))
    out.backward(g)
    expected = g / sigma - (g * w).sum() / sigma**2 * torch.outer(u, v)
    torch.testing.assert_close(leaf.grad, expected, rtol=1e-9, atol=1e-9)


def test_two_forwards_then_backward(kata):
    """Two training forwards and one backward through both work (a GAN's D(real), D(fake))."""
    torch.manual_seed(0)
    w = torch.randn(3, 5, dtype=F64)
    sn = holding(kata.SpectralNorm(w), unit(3, 1), unit(5, 2))
    leaf = w.clone().requires_grad_()
    first, second = sn(leaf), sn(leaf)
    (first.sum() + (second * 2).sum()).backward()
    assert leaf.grad is not None and leaf.grad.shape == w.shape


def test_conv_weight_as_matrix(kata):
    """A Conv2d weight (out, in, kh, kw) is the matrix (out, in·kh·kw): u (out,), v (in·kh·kw,),
    and one step and the output as for that matrix."""
    torch.manual_seed(0)
    weight = torch.randn(4, 2, 3, 3, dtype=F64)
    flat = weight.flatten(1)
    u0, v0 = unit(4, 1), unit(18, 2)
    sn = holding(kata.SpectralNorm(weight), u0, v0)
    out = sn(weight)
    expect_steps(sn, flat, u0, v0, 1)
    sigma = sn._u.double() @ flat @ sn._v.double()
    torch.testing.assert_close(out, weight / sigma, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("shape", "dim"), [((2, 4, 3, 3), 1), ((3, 5), 1), ((2, 3, 4, 2), 2)])
def test_dim_moved_to_front(kata, shape, dim):
    """dim is moved to the front and the other dims, in their order, flattened: W is
    weight.movedim(dim, 0).flatten(1) (dim=2 is torch parity)."""
    torch.manual_seed(0)
    weight = torch.randn(shape, dtype=F64)
    flat = weight.movedim(dim, 0).flatten(1)
    u0, v0 = unit(flat.shape[0], 1), unit(flat.shape[1], 2)
    sn = holding(kata.SpectralNorm(weight, dim=dim), u0, v0)
    out = sn(weight)
    expect_steps(sn, flat, u0, v0, 1)
    sigma = sn._u.double() @ flat @ sn._v.double()
    torch.testing.assert_close(out, weight / sigma, rtol=1e-9, atol=1e-9)


def test_eps_bounds_the_normalization(kata):
    """A vector shorter than eps is not blown up to unit length (eps=1e-2, ‖W‖₂ = 1e-3)."""
    w = with_singular_values(3, 5, (1e-3, 5e-4, 2e-4))
    sn = holding(kata.SpectralNorm(w, eps=1e-2), unit(3, 1), unit(5, 2))
    sn(w)
    assert sn._u.norm().item() < 0.5 and sn._v.norm().item() < 0.5


def test_spectral_norm_registers_on_the_named_parameter(kata):
    """spectral_norm(module, name, n_power_iterations, dim) registers the kata's SpectralNorm on
    module.<name> with those arguments, and returns the module."""

    class Gated(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(3, 5, dtype=F64))
            self.gate = nn.Parameter(torch.randn(4, 6, dtype=F64))

    torch.manual_seed(0)
    layer = Gated()
    gate = layer.gate.detach().clone()
    assert kata.spectral_norm(layer, name="gate", n_power_iterations=2, dim=1) is layer
    assert not parametrize.is_parametrized(layer, "weight")
    sn = layer.parametrizations.gate[0]
    assert isinstance(sn, kata.SpectralNorm)
    u0, v0 = unit(6, 1), unit(4, 2)
    holding(sn, u0, v0)
    out = layer.gate
    flat = gate.mT
    expect_steps(sn, flat, u0, v0, 2)
    sigma = sn._u.double() @ flat @ sn._v.double()
    torch.testing.assert_close(out, gate / sigma, rtol=1e-9, atol=1e-9)


def test_spectral_norm_defaults(kata):
    """spectral_norm(nn.Linear(5, 3)): one step per forward, eps 1e-12, dim 0."""
    torch.manual_seed(0)
    linear = nn.Linear(5, 3).double()
    with torch.no_grad():
        linear.weight.mul_(0.1)
    weight = linear.weight.detach().clone()
    sn = kata.spectral_norm(linear).parametrizations.weight[0]
    u0, v0 = unit(3, 1), unit(5, 2)
    holding(sn, u0, v0)
    out = linear.weight
    expect_steps(sn, weight, u0, v0, 1)
    sigma = sn._u.double() @ weight @ sn._v.double()
    torch.testing.assert_close(out, weight / sigma, rtol=1e-9, atol=1e-9)
    # A weight trained to zero: the default eps keeps u and v at zero, not 0 / 0.
    with torch.no_grad():
        linear.parametrizations.weight.original.zero_()
    assert linear.weight.shape == (3, 5)  # a training forward
    assert not sn._u.isnan().any() and not sn._v.isnan().any()


def test_initialised_like_torch(kata):
    """Torch parity: after the same torch.manual_seed, u and v start as torch's (drawn, then
    15 power steps)."""
    w = with_singular_values(3, 5, (2.0, 1.8, 1.0)).float()  # slow: 14 or 16 steps show
    torch.manual_seed(7)
    theirs = _SpectralNorm(w)
    torch.manual_seed(7)
    mine = kata.SpectralNorm(w)
    torch.testing.assert_close(mine._u, theirs._u, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(mine._v, theirs._v, rtol=1e-5, atol=1e-6)


def test_eps_like_f_normalize(kata):
    """Torch parity: each step divides by max(‖x‖, eps), as F.normalize, not ‖x‖ + eps."""
    w = with_singular_values(3, 5, (1e-3, 5e-4, 2e-4))
    u0, v0 = unit(3, 1), unit(5, 2)
    sn = holding(kata.SpectralNorm(w, eps=1e-2), u0, v0)
    sn(w)
    expect_steps(sn, w, u0, v0, 1, eps=1e-2)


def test_vector_weight(kata):
    """Torch parity: a 1-D weight is divided by max(‖weight‖, eps), in training and eval; a
    zero vector stays zero."""
    b = torch.randn(6, dtype=F64, generator=torch.Generator().manual_seed(0)) * 3
    sn = kata.SpectralNorm(b)
    torch.testing.assert_close(sn(b), b / b.norm(), rtol=1e-9, atol=1e-9)
    sn.eval()
    torch.testing.assert_close(sn(b), b / b.norm(), rtol=1e-9, atol=1e-9)
    short = b * 0.01
    out = kata.SpectralNorm(short, eps=1.0)(short)
    torch.testing.assert_close(out, short, rtol=1e-9, atol=1e-9)
    zero = torch.zeros(6, dtype=F64)
    torch.testing.assert_close(kata.SpectralNorm(zero)(zero), zero, rtol=0, atol=0)


def test_rejects_nonpositive_iterations(kata):
    """Torch parity: n_power_iterations < 1 raises ValueError."""
    for n in (0, -1):
        with pytest.raises(ValueError):
            kata.SpectralNorm(torch.randn(3, 5), n_power_iterations=n)


def test_conv_transpose_default_dim(kata):
    """Torch parity: spectral_norm of a ConvTranspose2d defaults to dim=1 (its output
    channels), of a Conv2d to dim=0: u has 4 values for both."""
    torch.manual_seed(0)
    for layer in (nn.ConvTranspose2d(2, 4, 3), nn.Conv2d(2, 4, 3)):
        sn = kata.spectral_norm(layer).parametrizations.weight[0]
        assert sn._u.shape == (4,) and sn._v.shape == (18,)
