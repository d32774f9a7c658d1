"""Reference tests of the BatchNorm-backward kata: BatchNormFunction and batch_norm_train
(training mode, batch statistics), against autograd through torch's own
F.batch_norm(..., training=True).

Each test states one property of the contract: forward's formula over every dim but the
channels, the wrapper's eps, each gradient (the weight's and the bias's summed over N, H and W,
grad_x through the weight, the batch mean and the batch variance, over N, H and W), eps inside
the square root in backward, a weight with zeros, inputs left as they were, a backward that
computes by hand; then torch parity: float64 computed in float64, non-contiguous inputs and half
precision.
"""

import pytest
import torch
import torch.nn.functional as F


def inputs(*shape, dtype=torch.float64, spread=2.0, centre=1.0):
    """x of `shape` (N, C, *), and a random weight and bias of size C."""
    c = shape[1]
    x = torch.randn(shape, dtype=dtype) * spread + centre
    w = torch.randn(c, dtype=dtype) + 1
    b = torch.randn(c, dtype=dtype)
    return x, w, b


def per_channel(t, x):
    """A (C,) tensor shaped to broadcast along x's dim 1."""
    return t.view(1, -1, *[1] * (x.dim() - 2))


def run(fn, x, w, b, eps, grad_out):
    """fn(x, w, b, eps) and the gradients of x, w and b that autograd gets for grad_out."""
    leaves = [t.detach().clone().requires_grad_() for t in (x, w, b)]
    y = fn(*leaves, eps)
    y.backward(grad_out.clone())
    return y.detach(), tuple(t.grad for t in leaves)


def torch_batch_norm(x, w, b, eps):
    return F.batch_norm(x, None, None, w, b, training=True, eps=eps)


def mine(kata):
    return lambda x, w, b, eps: kata.batch_norm_train(x, w, b, eps)


def direct(kata, x, w, b, eps, grad_out):
    """forward through BatchNormFunction.apply, then its backward called with y's node as ctx:
    y and what backward returns, as it returns it (autograd would sum a gradient of shape
    (C, H, W) down to the weight's (C,))."""
    leaves = [t.detach().clone().requires_grad_() for t in (x, w, b)]
    y = kata.BatchNormFunction.apply(*leaves, eps)
    return y, kata.BatchNormFunction.backward(y.grad_fn, grad_out)


def assert_grads_close(got, want, **tol):
    for name, g, e in zip(("grad_x", "grad_weight", "grad_bias"), got, want, strict=True):
        torch.testing.assert_close(g, e, msg=lambda m, name=name: f"{name}: {m}", **tol)


def x_hat_of(x, eps=1e-5):
    return torch_batch_norm(x, None, None, eps)


def test_backward_returns_a_grad_per_input(kata):
    """backward returns (grad_x, grad_weight, grad_bias, None): shapes of x, (C,), (C,)."""
    torch.manual_seed(0)
    x, w, b = (t.requires_grad_() for t in inputs(8, 3))
    y = kata.BatchNormFunction.apply(x, w, b, 1e-5)
    grads = kata.BatchNormFunction.backward(y.grad_fn, torch.randn_like(y))
    assert len(grads) == 4
    assert [tuple(g.shape) for g in grads[:3]] == [(8, 3), (3,), (3,)]
    assert grads[3] is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5, 2)])
def test_forward_matches_torch(kata, shape, dtype):
    """forward is F.batch_norm in training mode: per channel over every dim but 1, the biased
    variance, eps inside the square root."""
    torch.manual_seed(1)
    x, w, b = inputs(*shape, dtype=dtype)
    y = kata.batch_norm_train(x, w, b, 1e-5)
    torch.testing.assert_close(y, torch_batch_norm(x, w, b, 1e-5), rtol=1e-5, atol=1e-5)
    small = x * 0.05  # a variance near eps: eps's place shows
    y = kata.batch_norm_train(small, w, b, 0.05)
    torch.testing.assert_close(y, torch_batch_norm(small, w, b, 0.05), rtol=1e-5, atol=1e-5)


def test_wrapper_default_eps(kata):
    """batch_norm_train's eps defaults to 1e-5, and an eps given is passed on."""
    torch.manual_seed(2)
    x, w, b = inputs(8, 3, spread=0.01)  # variance 1e-4: 1e-5 against 1e-6 shows
    torch.testing.assert_close(
        kata.batch_norm_train(x, w, b), torch_batch_norm(x, w, b, 1e-5), rtol=1e-5, atol=1e-5
    )
    torch.testing.assert_close(
        kata.batch_norm_train(x, w, b, 0.1), torch_batch_norm(x, w, b, 0.1), rtol=1e-5, atol=1e-5
    )


def test_grad_bias_sums_over_n_h_w(kata):
    """backward's grad_bias is grad_out summed over every dim but the channels (N, H and W),
    of shape (C,)."""
    torch.manual_seed(3)
    x, w, b = inputs(4, 3, 2, 5)
    grad_out = torch.randn_like(x)
    _, (_, _, gb, _) = direct(kata, x, w, b, 1e-5, grad_out)
    torch.testing.assert_close(gb, grad_out.sum((0, 2, 3)), rtol=1e-5, atol=1e-5)


def test_grad_weight_sums_over_n_h_w(kata):
    """backward's grad_weight is grad_out · x̂ summed over N, H and W (x̂, not x), of shape
    (C,)."""
    torch.manual_seed(4)
    x, w, b = inputs(4, 3, 2, 5)
    grad_out = torch.randn_like(x)
    _, (_, gw, _, _) = direct(kata, x, w, b, 1e-5, grad_out)
    want = (grad_out * x_hat_of(x)).sum((0, 2, 3))
    torch.testing.assert_close(gw, want, rtol=1e-5, atol=1e-5)


def test_grad_x_through_the_weight(kata):
    """grad_x is rstd · grad_out · weight where grad_out · weight has no mean and no part along
    x̂ over any channel."""
    torch.manual_seed(5)
    x, w, b = inputs(8, 3)
    x_hat = x_hat_of(x)
    g = torch.randn_like(x)
    g = g - g.mean(0, keepdim=True)
    g = g - x_hat * (g * x_hat).mean(0, keepdim=True) / x_hat.square().mean(0, keepdim=True)
    rstd = torch.rsqrt(x.var(0, unbiased=False, keepdim=True) + 1e-5)
    _, (gx, _, _) = run(mine(kata), x, w, b, 1e-5, g / w)
    torch.testing.assert_close(gx, rstd * g, rtol=1e-5, atol=1e-5)


def test_grad_x_through_the_mean(kata):
    """a gradient of x̂ constant over each channel gives grad_x = 0: the batch mean's term."""
    torch.manual_seed(6)
    x, w, b = inputs(8, 3)
    grad_out = (torch.randn(3, dtype=x.dtype) / w).expand_as(x).clone()
    _, (gx, _, _) = run(mine(kata), x, w, b, 1e-5, grad_out)
    torch.testing.assert_close(gx, torch.zeros_like(x), rtol=0, atol=1e-5)


def test_grad_x_through_the_variance(kata):
    """a gradient of x̂ proportional to x̂ (a factor per channel) gives grad_x ≈ 0: the batch
    variance's term."""
    torch.manual_seed(7)
    x, w, b = inputs(8, 3)
    factor = torch.randn(3, dtype=x.dtype) + 2
    grad_out = x_hat_of(x) * factor / w
    _, (gx, _, _) = run(mine(kata), x, w, b, 1e-5, grad_out)
    _, (want, _, _) = run(torch_batch_norm, x, w, b, 1e-5, grad_out)
    torch.testing.assert_close(gx, want, rtol=1e-5, atol=1e-5)


def test_grad_x_over_n_h_w(kata):
    """on (N, C, H, W), grad_x's batch means run over N, H and W, as autograd's do."""
    torch.manual_seed(8)
    x, w, b = inputs(4, 3, 2, 5)
    grad_out = torch.randn_like(x)
    _, (gx, _, _) = run(mine(kata), x, w, b, 1e-5, grad_out)
    _, (want, _, _) = run(torch_batch_norm, x, w, b, 1e-5, grad_out)
    torch.testing.assert_close(gx, want, rtol=1e-5, atol=1e-5)


def test_backward_eps_inside_sqrt(kata):
    """backward scales by the same 1/√(var + eps) as forward, where eps shows (small inputs)."""
    torch.manual_seed(9)
    x, w, b = inputs(8, 3, spread=0.1)
    grad_out = torch.randn_like(x)
    _, got = run(mine(kata), x, w, b, 0.05, grad_out)
    _, want = run(torch_batch_norm, x, w, b, 0.05, grad_out)
    assert_grads_close(got, want, rtol=1e-5, atol=1e-5)


def test_zero_weight_elements(kata):
    """a weight with elements at 0 gives the output and every gradient torch gives."""
    torch.manual_seed(10)
    x, w, b = inputs(8, 4)
    w[::3] = 0.0
    grad_out = torch.randn_like(x)
    y, got = run(mine(kata), x, w, b, 1e-5, grad_out)
    want_y, want = run(torch_batch_norm, x, w, b, 1e-5, grad_out)
    torch.testing.assert_close(y, want_y, rtol=1e-5, atol=1e-5)
    assert_grads_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16])
def test_inputs_unmodified(kata, dtype):
    """forward leaves x as it was, and backward leaves grad_out as it was."""
    torch.manual_seed(11)
    x, w, b = inputs(4, 3, 2, 2, dtype=dtype)
    grad_out = torch.randn_like(x)
    x0, g0 = x.clone(), grad_out.clone()
    y = kata.BatchNormFunction.apply(x, w.requires_grad_(), b.requires_grad_(), 1e-5)
    assert torch.equal(x, x0), "forward changed x"
    kata.BatchNormFunction.backward(y.grad_fn, grad_out)
    assert torch.equal(x, x0), "backward changed x"
    assert torch.equal(grad_out, g0), "backward changed grad_out"


def test_backward_computes_without_autograd(kata, monkeypatch):
    """backward computes the gradients itself: no autograd call inside it."""
    torch.manual_seed(12)
    x, w, b = (t.requires_grad_() for t in inputs(4, 3, 2, 2))
    y = kata.BatchNormFunction.apply(x, w, b, 1e-5)

    def forbidden(*args, **kwargs):
        raise AssertionError("backward called autograd")

    monkeypatch.setattr(torch.autograd, "grad", forbidden)
    monkeypatch.setattr(torch.autograd, "backward", forbidden)
    monkeypatch.setattr(torch.Tensor, "backward", forbidden)
    grads = kata.BatchNormFunction.backward(y.grad_fn, torch.ones_like(y))
    monkeypatch.undo()
    _, want = run(torch_batch_norm, x, w, b, 1e-5, torch.ones_like(y))
    assert_grads_close(grads[:3], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(5, 3), (3, 2, 2, 2)])
def test_gradcheck(kata, shape):
    """torch.autograd.gradcheck passes on batch_norm_train in float64
    (where forward keeps float64 in float64: computing it in float32 is a dtype policy)."""
    torch.manual_seed(13)
    x, w, b = (t.requires_grad_() for t in inputs(*shape))
    with torch.no_grad():
        error = (kata.batch_norm_train(x, w, b) - torch_batch_norm(x, w, b, 1e-5)).abs().max()
    if 1e-10 < error < 1e-5:
        pytest.skip("forward rounds float64 to float32: test_computes_in_float64 judges it")
    assert torch.autograd.gradcheck(lambda *t: kata.batch_norm_train(*t, 1e-5), (x, w, b))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5, 2)])
def test_gradients_match_autograd(kata, shape, dtype):
    """grad_x, grad_weight and grad_bias match autograd through F.batch_norm."""
    torch.manual_seed(14)
    x, w, b = inputs(*shape, dtype=dtype)
    grad_out = torch.randn_like(x)
    _, got = run(mine(kata), x, w, b, 1e-5, grad_out)
    _, want = run(torch_batch_norm, x, w, b, 1e-5, grad_out)
    assert_grads_close(got, want, rtol=1e-4, atol=1e-4)


# Torch parity ----------------------------------------------------------------------------------


def test_computes_in_float64(kata):
    """torch parity: float64 is computed in float64, forward and backward (to 1e-10)."""
    torch.manual_seed(15)
    x, w, b = inputs(4, 3, 2, 2)
    grad_out = torch.randn_like(x)
    y, got = run(mine(kata), x, w, b, 1e-5, grad_out)
    want_y, want = run(torch_batch_norm, x, w, b, 1e-5, grad_out)
    for g, e in zip((y, *got), (want_y, *want), strict=True):
        assert g.dtype == torch.float64
        torch.testing.assert_close(g, e, rtol=0, atol=1e-10 * e.abs().max().item())


def test_noncontiguous_input(kata):
    """torch parity: a permuted (non-contiguous) x works, forward and backward."""
    torch.manual_seed(16)
    x = (torch.randn(4, 5, 2, 3, dtype=torch.float64) * 2 + 1).permute(0, 3, 2, 1)
    _, w, b = inputs(1, 3)
    grad_out = torch.randn(4, 3, 2, 5, dtype=torch.float64)
    y, got = run(mine(kata), x, w, b, 1e-5, grad_out)
    want_y, want = run(torch_batch_norm, x, w, b, 1e-5, grad_out)
    torch.testing.assert_close(y, want_y, rtol=1e-5, atol=1e-5)
    assert_grads_close(got, want, rtol=1e-5, atol=1e-5)


def test_noncontiguous_grad_out(kata):
    """torch parity: a permuted (non-contiguous) grad_out works."""
    torch.manual_seed(17)
    x, w, b = inputs(4, 3, 2, 5)
    grad_out = torch.randn(4, 5, 2, 3, dtype=torch.float64).permute(0, 3, 2, 1)
    _, got = run(mine(kata), x, w, b, 1e-5, grad_out)
    _, want = run(torch_batch_norm, x, w, b, 1e-5, grad_out)
    assert_grads_close(got, want, rtol=1e-5, atol=1e-5)


HALF_OFFSET = {torch.float16: 384.0, torch.bfloat16: 48.0}  # a mean that half rounds badly


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("far", ["x", "grad_out"])
def test_half_precision(kata, dtype, far):
    """torch parity: half inputs are computed in float32 and rounded once to their dtype
    (within 2 ulps of the formula in float64); every gradient comes back in its input's dtype."""
    torch.manual_seed(18)
    offset = HALF_OFFSET[dtype]
    x = (torch.randn(4, 4, 4, 4) + (offset if far == "x" else 0.0)).to(dtype)
    grad_out = (torch.randn(4, 4, 4, 4) + (offset if far == "grad_out" else 0.0)).to(dtype)
    w, b = torch.ones(4, dtype=dtype), torch.zeros(4, dtype=dtype)
    leaves = [t.clone().requires_grad_() for t in (x, w, b)]
    y = kata.BatchNormFunction.apply(*leaves, 1e-5)
    got = kata.BatchNormFunction.backward(y.grad_fn, grad_out)[:3]
    as_float64 = (t.double() for t in (x, w, b))
    want_y, want = run(torch_batch_norm, *as_float64, 1e-5, grad_out.double())
    assert [g.dtype for g in (y, *got)] == [dtype] * 4, "y and every gradient in their dtype"
    tol = 2 * torch.finfo(dtype).eps
    torch.testing.assert_close(y, want_y.to(dtype), rtol=tol, atol=tol)
    assert_grads_close(got, [g.to(dtype) for g in want], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_float32_parameters_with_half_input(kata, dtype):
    """torch parity: a float32 weight and bias beside half x get float32-precise gradients,
    returned in float32."""
    torch.manual_seed(19)
    x = torch.randn(4, 4, 4, 4).to(dtype)
    grad_out = torch.randn(4, 4, 4, 4).to(dtype)
    _, w, b = inputs(1, 4, dtype=torch.float32)
    xr, wr, br = x.requires_grad_(), w.requires_grad_(), b.requires_grad_()
    y = kata.BatchNormFunction.apply(xr, wr, br, 1e-5)
    grads = kata.BatchNormFunction.backward(y.grad_fn, grad_out)
    as_float64 = (t.detach().double() for t in (x, w, b))
    want_y, want = run(torch_batch_norm, *as_float64, 1e-5, grad_out.double())
    tol = 2 * torch.finfo(dtype).eps
    assert y.dtype == dtype and grads[0].dtype == dtype
    torch.testing.assert_close(y, want_y.to(dtype), rtol=tol, atol=tol)
    torch.testing.assert_close(grads[0], want[0].to(dtype), rtol=tol, atol=tol)
    for got, e in zip(grads[1:3], want[1:], strict=True):
        assert got.dtype == torch.float32
        torch.testing.assert_close(got, e.float(), rtol=1e-5, atol=1e-5)
