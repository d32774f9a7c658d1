"""Reference tests of the RMSNorm-backward kata: RMSNormFunction, rms_norm and the RMSNorm
module, against autograd through torch's own F.rms_norm and nn.RMSNorm.

Each test states one property of the contract: forward's formula, the eps passed on, each
gradient (the weight's summed over every row, grad_x through the weight and through the rms),
eps inside the square root in backward, a weight with zeros, no weight at all, inputs left as
they were, a backward that computes by hand, the module; then torch parity: the eps=None
default, float64 computed in float64, non-contiguous inputs, an unbatched x and half precision.
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn


def inputs(*shape, dtype=torch.float64, spread=2.0, centre=1.0):
    """x of `shape` (rows over the last dim), and a random weight of size D."""
    x = torch.randn(shape, dtype=dtype) * spread + centre
    w = torch.randn(shape[-1], dtype=dtype) + 1
    return x, w


def run(fn, x, w, eps, grad_out):
    """fn(x, w, eps) and the gradients of x and w (None without w) that autograd gets."""
    x = x.detach().clone().requires_grad_()
    w = None if w is None else w.detach().clone().requires_grad_()
    y = fn(x, w, eps)
    y.backward(grad_out.clone())
    return y.detach(), (x.grad, None if w is None else w.grad)


def torch_rms_norm(x, w, eps):
    return F.rms_norm(x, x.shape[-1:], w, eps)


def mine(kata):
    return lambda x, w, eps: kata.rms_norm(x, w, eps)


def direct(kata, x, w, eps, grad_out):
    """forward through RMSNormFunction.apply, then its backward called with y's node as ctx:
    y and what backward returns, as it returns it."""
    x = x.detach().clone().requires_grad_()
    w = None if w is None else w.detach().clone().requires_grad_()
    y = kata.RMSNormFunction.apply(x, w, eps)
    return y, kata.RMSNormFunction.backward(y.grad_fn, grad_out)


def assert_grads_close(got, want, **tol):
    for name, g, e in zip(("grad_x", "grad_weight"), got, want, strict=True):
        torch.testing.assert_close(g, e, msg=lambda m, name=name: f"{name}: {m}", **tol)


def x_hat_of(x, eps=1e-5):
    return torch_rms_norm(x, None, eps)


def test_backward_returns_a_grad_per_input(kata):
    """backward returns (grad_x, grad_weight, None): shapes of x and (D,), None for eps."""
    torch.manual_seed(0)
    x, w = inputs(4, 8)
    _, grads = direct(kata, x, w, 1e-5, torch.randn_like(x))
    assert len(grads) == 3
    assert [tuple(g.shape) for g in grads[:2]] == [(4, 8), (8,)]
    assert grads[2] is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(4, 8), (2, 3, 16)])
def test_forward_matches_torch(kata, shape, dtype):
    """forward is F.rms_norm over the last dim: x / √(mean(x²) + eps) · weight."""
    torch.manual_seed(1)
    x, w = inputs(*shape, dtype=dtype)
    y = kata.rms_norm(x, w, 1e-5)
    torch.testing.assert_close(y, torch_rms_norm(x, w, 1e-5), rtol=1e-5, atol=1e-5)
    small = x * 0.05  # a mean square near eps: eps's place shows
    y = kata.rms_norm(small, w, 0.05)
    torch.testing.assert_close(y, torch_rms_norm(small, w, 0.05), rtol=1e-5, atol=1e-5)


def test_wrapper_passes_eps(kata):
    """rms_norm passes the eps it is given on to the Function."""
    torch.manual_seed(2)
    x, w = inputs(4, 8, spread=0.01, centre=0.0)
    torch.testing.assert_close(
        kata.rms_norm(x, w, 1e-4), torch_rms_norm(x, w, 1e-4), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("shape", [(3, 4, 8), (2, 3, 2, 8)])
def test_grad_weight_sums_over_every_row(kata, shape):
    """backward's grad_weight is grad_out · x̂ summed over every dim but the last, of shape (D,)
    (x̂, not the output)."""
    torch.manual_seed(3)
    x, w = inputs(*shape)
    grad_out = torch.randn_like(x)
    _, (_, gw, _) = direct(kata, x, w, 1e-5, grad_out)  # autograd would sum a (T, D) to (D,)
    rows = tuple(range(x.dim() - 1))
    torch.testing.assert_close(gw, (grad_out * x_hat_of(x)).sum(rows), rtol=1e-5, atol=1e-5)


def test_grad_x_through_the_weight(kata):
    """grad_x is rstd · grad_out · weight where grad_out · weight has no part along x̂."""
    torch.manual_seed(4)
    x, w = inputs(4, 8)
    x_hat = x_hat_of(x)
    g = torch.randn_like(x)
    g = g - x_hat * (g * x_hat).sum(-1, keepdim=True) / x_hat.square().sum(-1, keepdim=True)
    rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + 1e-5)
    _, (gx, _) = run(mine(kata), x, w, 1e-5, g / w)
    torch.testing.assert_close(gx, rstd * g, rtol=1e-5, atol=1e-5)


def test_grad_x_through_the_rms(kata):
    """a gradient of x̂ proportional to x̂ (a factor per row) gives grad_x ≈ 0: the rms's term,
    each row's own."""
    torch.manual_seed(5)
    x, w = inputs(4, 8)
    factor = torch.randn(4, 1, dtype=x.dtype) + 2
    grad_out = x_hat_of(x) * factor / w
    _, (gx, _) = run(mine(kata), x, w, 1e-5, grad_out)
    _, (want, _) = run(torch_rms_norm, x, w, 1e-5, grad_out)
    torch.testing.assert_close(gx, want, rtol=1e-5, atol=1e-5)


def test_backward_eps_inside_sqrt(kata):
    """backward scales by the same 1/√(mean(x²) + eps) as forward, where eps shows."""
    torch.manual_seed(6)
    x, w = inputs(4, 8, spread=0.1)
    grad_out = torch.randn_like(x)
    _, got = run(mine(kata), x, w, 0.05, grad_out)
    _, want = run(torch_rms_norm, x, w, 0.05, grad_out)
    assert_grads_close(got, want, rtol=1e-5, atol=1e-5)


def test_zero_weight_elements(kata):
    """a weight with elements at 0 gives the output and every gradient torch gives."""
    torch.manual_seed(7)
    x, w = inputs(4, 8)
    w[::3] = 0.0
    grad_out = torch.randn_like(x)
    y, got = run(mine(kata), x, w, 1e-5, grad_out)
    want_y, want = run(torch_rms_norm, x, w, 1e-5, grad_out)
    torch.testing.assert_close(y, want_y, rtol=1e-5, atol=1e-5)
    assert_grads_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("eps", [1e-5, 0.05])
def test_without_weight(kata, eps):
    """weight=None: y is x̂, grad_x as torch's, and backward returns None for the weight."""
    torch.manual_seed(8)
    x, _ = inputs(3, 8, spread=2.0 if eps < 0.01 else 0.1)
    grad_out = torch.randn_like(x)
    y, grads = direct(kata, x, None, eps, grad_out)
    want_y, (want, _) = run(torch_rms_norm, x, None, eps, grad_out)
    torch.testing.assert_close(y, want_y, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grads[0], want, rtol=1e-5, atol=1e-5)
    assert grads[1] is None


@pytest.mark.parametrize("weighted", [True, False], ids=["weight", "no_weight"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16])
def test_inputs_unmodified(kata, dtype, weighted):
    """forward leaves x as it was, and backward leaves x and grad_out as they were."""
    torch.manual_seed(9)
    x, w = inputs(3, 8, dtype=dtype)
    w = w.requires_grad_() if weighted else None
    x.requires_grad_()
    grad_out = torch.randn_like(x)
    x0, g0 = x.detach().clone(), grad_out.clone()
    y = kata.RMSNormFunction.apply(x, w, 1e-5)
    assert torch.equal(x, x0), "forward changed x"
    kata.RMSNormFunction.backward(y.grad_fn, grad_out)
    assert torch.equal(x, x0), "backward changed x"
    assert torch.equal(grad_out, g0), "backward changed grad_out"


def test_backward_computes_without_autograd(kata, monkeypatch):
    """backward computes the gradients itself: no autograd call inside it."""
    torch.manual_seed(10)
    x, w = (t.requires_grad_() for t in inputs(3, 8))
    y = kata.RMSNormFunction.apply(x, w, 1e-5)

    def forbidden(*args, **kwargs):
        raise AssertionError("backward called autograd")

    monkeypatch.setattr(torch.autograd, "grad", forbidden)
    monkeypatch.setattr(torch.autograd, "backward", forbidden)
    monkeypatch.setattr(torch.Tensor, "backward", forbidden)
    grads = kata.RMSNormFunction.backward(y.grad_fn, torch.ones_like(y))
    monkeypatch.undo()
    _, want = run(torch_rms_norm, x, w, 1e-5, torch.ones_like(y))
    assert_grads_close(grads[:2], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("weighted", [True, False], ids=["weight", "no_weight"])
def test_gradcheck(kata, weighted):
    """torch.autograd.gradcheck passes on rms_norm in float64, with and without a weight
    (where forward keeps float64 in float64: computing it in float32 is a dtype policy)."""
    torch.manual_seed(11)
    x, w = (t.requires_grad_() for t in inputs(3, 5))
    with torch.no_grad():
        error = (kata.rms_norm(x, w, 1e-5) - torch_rms_norm(x, w, 1e-5)).abs().max()
    if 1e-10 < error < 1e-5:
        pytest.skip("forward rounds float64 to float32: test_computes_in_float64 judges it")
    if weighted:
        assert torch.autograd.gradcheck(lambda x, w: kata.rms_norm(x, w, 1e-5), (x, w))
    else:
        assert torch.autograd.gradcheck(lambda x: kata.rms_norm(x, None, 1e-5), (x,))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(4, 8), (2, 3, 16), (2, 2, 3, 8)])
def test_gradients_match_autograd(kata, shape, dtype):
    """grad_x and grad_weight match autograd through F.rms_norm."""
    torch.manual_seed(12)
    x, w = inputs(*shape, dtype=dtype)
    grad_out = torch.randn_like(x)
    _, got = run(mine(kata), x, w, 1e-5, grad_out)
    _, want = run(torch_rms_norm, x, w, 1e-5, grad_out)
    assert_grads_close(got, want, rtol=1e-4, atol=1e-4)


def test_module_is_torchs_rmsnorm(kata):
    """RMSNorm(normalized_shape, eps=None, elementwise_affine=True) has nn.RMSNorm's attributes:
    normalized_shape a tuple, eps, a weight of ones or None."""
    for shape in (8, (8,), [8]):
        assert kata.RMSNorm(shape).normalized_shape == (8,)
    layer = kata.RMSNorm(8)
    assert layer.eps is None and layer.elementwise_affine is True
    assert torch.equal(layer.weight, torch.ones(8))
    assert [name for name, _ in layer.named_parameters()] == ["weight"]
    layer = kata.RMSNorm(8, eps=0.1, elementwise_affine=False)
    assert layer.eps == 0.1 and layer.elementwise_affine is False
    assert layer.weight is None and list(layer.parameters()) == []


@pytest.mark.parametrize("kwargs", [{"eps": 1e-5}, {"eps": 0.05}, {"elementwise_affine": False}])
def test_module_gradients_come_from_the_function(kata, monkeypatch, kwargs):
    """RMSNorm's output and gradients are nn.RMSNorm's, and its backward is RMSNormFunction's."""
    torch.manual_seed(13)
    kwargs = {"eps": 1e-5, **kwargs}
    mine_layer, ref = kata.RMSNorm(8, **kwargs), nn.RMSNorm(8, **kwargs)
    if ref.weight is not None:
        with torch.no_grad():
            ref.weight.normal_()
        mine_layer.load_state_dict(ref.state_dict())
    calls = []
    original = kata.RMSNormFunction.backward

    def spy(ctx, grad_out):
        calls.append(grad_out.shape)
        return original(ctx, grad_out)

    monkeypatch.setattr(kata.RMSNormFunction, "backward", staticmethod(spy))
    x = torch.randn(3, 4, 8) * 0.1 + 0.5
    grad_out = torch.randn_like(x)
    xm, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
    y = mine_layer(xm)
    y.backward(grad_out)
    want = ref(xr)
    want.backward(grad_out)
    assert calls, "RMSNorm's gradient did not come from RMSNormFunction.backward"
    torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(xm.grad, xr.grad, rtol=1e-5, atol=1e-5)
    if ref.weight is not None:
        torch.testing.assert_close(mine_layer.weight.grad, ref.weight.grad, rtol=1e-5, atol=1e-5)


# Torch parity ----------------------------------------------------------------------------------


def test_default_eps(kata):
    """torch parity: eps=None, and only None, is torch.finfo(dtype).eps of the dtype computed in
    (float32's for half inputs); eps=0.0 is no eps."""
    torch.manual_seed(14)
    for dtype, scale in ((torch.float32, 3e-4), (torch.float64, 1e-8)):
        x, w = inputs(4, 8, dtype=dtype, spread=scale, centre=0.0)
        want = torch_rms_norm(x, w, None)
        torch.testing.assert_close(kata.rms_norm(x, w), want, rtol=1e-5, atol=1e-5)
        layer = kata.RMSNorm(8).to(dtype)
        torch.testing.assert_close(layer(x), nn.RMSNorm(8).to(dtype)(x), rtol=1e-5, atol=1e-5)
    x, w = inputs(4, 8, dtype=torch.float32, spread=3e-4, centre=0.0)
    torch.testing.assert_close(kata.rms_norm(x, w, 0.0), torch_rms_norm(x, w, 0.0))
    eps = torch.finfo(torch.float32).eps
    for dtype in (torch.float16, torch.bfloat16):
        x = (torch.randn(4, 8) * 3e-4).to(dtype)
        w = (torch.randn(8) + 1).to(dtype)
        x64 = x.double()
        x_hat = x64 * torch.rsqrt(x64.square().mean(-1, keepdim=True) + eps)
        tol = 2 * torch.finfo(dtype).eps
        got = kata.rms_norm(x, w)
        torch.testing.assert_close(got, (x_hat * w.double()).to(dtype), rtol=tol, atol=tol)


def test_computes_in_float64(kata):
    """torch parity: float64 is computed in float64, forward and backward (to 1e-10)."""
    torch.manual_seed(15)
    x, w = inputs(4, 8)
    grad_out = torch.randn_like(x)
    y, got = run(mine(kata), x, w, 1e-5, grad_out)
    want_y, want = run(torch_rms_norm, x, w, 1e-5, grad_out)
    for g, e in zip((y, *got), (want_y, *want), strict=True):
        assert g.dtype == torch.float64
        torch.testing.assert_close(g, e, rtol=0, atol=1e-10 * e.abs().max().item())


def test_noncontiguous_input(kata):
    """torch parity: a transposed (non-contiguous) x works, forward and backward."""
    torch.manual_seed(16)
    x = (torch.randn(2, 8, 6, dtype=torch.float64) * 2 + 1).transpose(1, 2)
    _, w = inputs(8)
    grad_out = torch.randn(2, 6, 8, dtype=torch.float64)
    y, got = run(mine(kata), x, w, 1e-5, grad_out)
    want_y, want = run(torch_rms_norm, x, w, 1e-5, grad_out)
    torch.testing.assert_close(y, want_y, rtol=1e-5, atol=1e-5)
    assert_grads_close(got, want, rtol=1e-5, atol=1e-5)


def test_noncontiguous_grad_out(kata):
    """torch parity: a transposed (non-contiguous) grad_out works."""
    torch.manual_seed(17)
    x, w = inputs(2, 6, 8)
    grad_out = torch.randn(2, 8, 6, dtype=torch.float64).transpose(1, 2)
    _, got = run(mine(kata), x, w, 1e-5, grad_out)
    _, want = run(torch_rms_norm, x, w, 1e-5, grad_out)
    assert_grads_close(got, want, rtol=1e-5, atol=1e-5)


def test_unbatched_input(kata):
    """torch parity: an x of shape (D,) works; grad_weight is still (D,)."""
    torch.manual_seed(18)
    x, w = inputs(8)
    grad_out = torch.randn_like(x)
    y, got = run(mine(kata), x, w, 1e-5, grad_out)
    want_y, want = run(torch_rms_norm, x, w, 1e-5, grad_out)
    torch.testing.assert_close(y, want_y, rtol=1e-5, atol=1e-5)
    assert_grads_close(got, want, rtol=1e-5, atol=1e-5)


HALF_OFFSET = {torch.float16: 384.0, torch.bfloat16: 48.0}  # a mean square half cannot hold


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("far", ["x", "grad_out"])
def test_half_precision(kata, dtype, far):
    """torch parity: half inputs are computed in float32 and rounded once to their dtype
    (within 2 ulps of the formula in float64); every gradient comes back in its input's dtype."""
    torch.manual_seed(19)
    offset = HALF_OFFSET[dtype]
    x = (torch.randn(4, 64) + (offset if far == "x" else 0.0)).to(dtype)
    grad_out = (torch.randn(4, 64) + (offset if far == "grad_out" else 0.0)).to(dtype)
    w = torch.ones(64, dtype=dtype)
    y, grads = direct(kata, x, w, 1e-5, grad_out)
    want_y, want = run(torch_rms_norm, x.double(), w.double(), 1e-5, grad_out.double())
    assert [g.dtype for g in (y, *grads[:2])] == [dtype] * 3, "y and every gradient in their dtype"
    tol = 2 * torch.finfo(dtype).eps
    torch.testing.assert_close(y, want_y.to(dtype), rtol=tol, atol=tol)
    assert_grads_close(grads[:2], [g.to(dtype) for g in want], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_float32_weight_with_half_input(kata, dtype):
    """torch parity: a float32 weight beside half x gets a float32-precise gradient, returned in
    float32."""
    torch.manual_seed(20)
    x = torch.randn(4, 64).to(dtype)
    grad_out = torch.randn(4, 64).to(dtype)
    _, w = inputs(64, dtype=torch.float32)
    y, grads = direct(kata, x, w, 1e-5, grad_out)
    want_y, want = run(torch_rms_norm, x.double(), w.double(), 1e-5, grad_out.double())
    tol = 2 * torch.finfo(dtype).eps
    assert y.dtype == dtype and grads[0].dtype == dtype and grads[1].dtype == torch.float32
    torch.testing.assert_close(y, want_y.to(dtype), rtol=tol, atol=tol)
    torch.testing.assert_close(grads[0], want[0].to(dtype), rtol=tol, atol=tol)
    torch.testing.assert_close(grads[1], want[1].float(), rtol=1e-5, atol=1e-5)
