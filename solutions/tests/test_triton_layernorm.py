"""Reference tests of the Triton LayerNorm kata: LayerNormFunction, layer_norm and the LayerNorm
module, against autograd through torch's own F.layer_norm in float64.

Each test states one property of the contract: forward's formula (eps inside the root, x's own
row stride), y and the gradients in the caller's shapes and dtypes, dx (through the mean and
the variance too, eps included), a dy transposed or expanded as autograd hands it, dweight
and dbias summed down every row (1, 33 and 267 rows: between multiples of any block, and past
256 partial rows), float16 far from 0, a row wider than a fixed block; then torch parity: the
module and the wrapper's default eps, and dy left as it was handed.

The kernels run in Triton's interpreter on the CPU, one program after another: the tensors are
small, and their widths (20, 33, 100, 1100) are not powers of two, so that every block has
lanes to spare. Float32 and float16 only: the interpreter computes bfloat16 arithmetic wrongly.
"""

import pytest
import torch
import torch.nn.functional as F

EPS = 1e-5


def make(shape, dtype=torch.float32, *, scale=2.0, shift=1.0, seed=0):
    """x (randn · scale + shift), a random weight and bias for its last dim, and a dy like x."""
    torch.manual_seed(seed)
    n = shape[-1]
    x = (torch.randn(shape) * scale + shift).to(dtype)
    weight = (torch.randn(n) * 0.5 + 1.0).to(dtype)
    bias = torch.randn(n).to(dtype)
    dy = torch.randn(shape).to(dtype)
    return x, weight, bias, dy


def expected(x, weight, bias, dy, eps=EPS):
    """Autograd through F.layer_norm in float64: y, dx, dweight, dbias (float64)."""
    leaves = [t.detach().double().requires_grad_() for t in (x, weight, bias)]
    y = F.layer_norm(leaves[0], (x.shape[-1],), leaves[1], leaves[2], eps)
    y.backward(dy.double())
    return (y.detach(), *(t.grad for t in leaves))


def run(kata, x, weight, bias, dy, eps=EPS):
    """kata.layer_norm forward, then autograd's backward with dy as given: y, dx, dweight,
    dbias. x, dy and their strides as the test made them (a clone would make a slice
    contiguous)."""
    leaves = [t.detach().requires_grad_() for t in (x, weight, bias)]
    y = kata.layer_norm(leaves[0], leaves[1], leaves[2], eps)
    y.backward(dy)
    return (y.detach(), *(t.grad for t in leaves))


def assert_all_close(got, want, names=("y", "dx", "dweight", "dbias"), rtol=1e-4, atol=1e-4):
    """Each of got matches want (float64, rounded to got's dtype first)."""
    for name, g, w in zip(names, got, want, strict=True):
        assert g is not None, f"{name} is None"
        assert g.shape == w.shape, f"{name}: shape {tuple(g.shape)}, expected {tuple(w.shape)}"
        torch.testing.assert_close(
            g, w.to(g.dtype), rtol=rtol, atol=atol, msg=lambda m, name=name: f"{name}: {m}"
        )


def test_forward_matches_torch(kata):
    """y = (x − mean) / sqrt(var + eps) · weight + bias over the last dim, the biased variance,
    on rows far from 0 and at widths that are not a power of two."""
    for shape, seed in (((4, 20), 1), ((3, 100), 2), ((2, 3, 33), 3)):
        x, weight, bias, _ = make(shape, scale=3.0, shift=5.0, seed=seed)
        y = kata.layer_norm(x, weight, bias, EPS)
        want = F.layer_norm(x.double(), shape[-1:], weight.double(), bias.double(), EPS)
        torch.testing.assert_close(y, want.float(), rtol=1e-4, atol=1e-4)


def test_eps_inside_the_square_root(kata):
    """eps is added to the variance under the root: rows of variance 0.01 with eps 0.1."""
    x, weight, bias, _ = make((3, 100), scale=0.1, shift=0.3, seed=4)
    for eps in (0.1, 1e-3):
        y = kata.layer_norm(x, weight, bias, eps)
        want = F.layer_norm(x.double(), (100,), weight.double(), bias.double(), eps)
        torch.testing.assert_close(y, want.float(), rtol=1e-4, atol=1e-4)


def test_rows_of_a_wider_tensor(kata):
    """x may be a slice of a wider tensor, its rows further apart than N: each row is read at
    x's own row stride, forward and backward."""
    wide, weight, bias, dy = make((3, 128), seed=5)
    weight, bias, dy = weight[:100], bias[:100], dy[:, :100].contiguous()
    x = wide[:, :100]  # rows 128 apart
    assert x.stride(0) == 128
    want = expected(x, weight, bias, dy)
    assert_all_close(run(kata, x, weight, bias, dy), want)


def test_shapes_of_y_and_the_gradients(kata):
    """y and dx come back in x's shape (3-D here), dweight and dbias in the weight's."""
    x, weight, bias, dy = make((2, 3, 20), seed=6)
    y, dx, dw, db = run(kata, x, weight, bias, dy)
    assert y.shape == x.shape and dx.shape == x.shape
    assert dw.shape == weight.shape and db.shape == bias.shape
    assert y.dtype == dx.dtype == dw.dtype == db.dtype == torch.float32


def test_grad_x(kata):
    """dx matches autograd through F.layer_norm, for eps small and large (0.5 on rows of
    variance 0.25), widths 20 and 100."""
    for shape, eps, scale, seed in (((4, 20), EPS, 2.0, 8), ((3, 100), 0.5, 0.5, 9)):
        x, weight, bias, dy = make(shape, scale=scale, seed=seed)
        want = expected(x, weight, bias, dy, eps)
        assert_all_close(run(kata, x, weight, bias, dy, eps), want)


def test_grad_x_through_the_mean(kata):
    """A dy · weight constant along each row gives dx = 0: adding a constant to a row leaves y
    as it was."""
    x, weight, bias, _ = make((4, 33), seed=10)
    dy = torch.randn(4, 1) / weight
    _, dx, _, _ = run(kata, x, weight, bias, dy)
    torch.testing.assert_close(dx, torch.zeros_like(dx), rtol=0, atol=1e-4)


def test_grad_x_through_the_variance(kata):
    """A dy · weight equal to x̂ times a factor per row gives dx ≈ 0: scaling a row about its
    mean leaves y as it was."""
    x, weight, bias, _ = make((4, 33), seed=11)
    x_hat = F.layer_norm(x, (33,), eps=EPS)
    dy = x_hat * (torch.rand(4, 1) + 1) / weight
    want = expected(x, weight, bias, dy)
    got = run(kata, x, weight, bias, dy)
    assert_all_close(got, want)
    torch.testing.assert_close(got[1], torch.zeros_like(x), rtol=0, atol=1e-3)


def test_grad_x_with_dy_as_autograd_hands_it(kata):
    """backward reads dy by its strides: a transposed dy, and the expanded ones of y.sum()."""
    x, weight, bias, dy = make((3, 20), seed=12)
    dy_t = dy.t().contiguous().t()  # same values, strides (1, 3)
    want = expected(x, weight, bias, dy)
    assert_all_close(run(kata, x, weight, bias, dy_t), want)
    leaves = [t.clone().requires_grad_() for t in (x, weight, bias)]
    kata.layer_norm(*leaves, EPS).sum().backward()  # dy of ones, strides (0, 0)
    want = expected(x, weight, bias, torch.ones_like(x))
    assert_all_close([t.grad for t in leaves], want[1:], names=("dx", "dweight", "dbias"))


def test_grad_weight_and_bias_sum_every_row(kata):
    """dweight = Σ dy · x̂ and dbias = Σ dy down every row, the leading dims' too, feature by
    feature."""
    x, weight, bias, dy = make((2, 8, 20), seed=13)
    want = expected(x, weight, bias, dy)
    assert_all_close(run(kata, x, weight, bias, dy), want)


@pytest.mark.parametrize(("rows", "n"), [(1, 20), (33, 20), (267, 32)])
def test_every_row_counted_once(kata, rows, n):
    """dweight and dbias sum all M rows exactly once: M = 1, 33 (between multiples of any
    block) and 267 (past 256 partial rows, where rows share them)."""
    x, weight, bias, dy = make((rows, n), seed=14 + rows)
    want = expected(x, weight, bias, dy)
    assert_all_close(run(kata, x, weight, bias, dy), want)


def test_half_precision(kata):
    """float16 in, float16 out (y, dx, dweight, dbias), computed in float32: rows far from 0,
    where a sum in float16 loses the mean's digits. backward itself returns dx in x's dtype
    (autograd would cast a float32 dx back to float16 on its way to x.grad, so it is called
    here directly, with y's node as its ctx)."""
    x, weight, bias, dy = make((2, 100), torch.float16, scale=2.0, shift=100.0, seed=15)
    want = expected(x, weight, bias, dy)
    got = run(kata, x, weight, bias, dy)
    for name, t in zip(("y", "dx", "dweight", "dbias"), got, strict=True):
        assert t.dtype == torch.float16, f"{name} is {t.dtype}"
    assert_all_close(got, want, rtol=2e-3, atol=2e-3)
    leaves = [t.clone().requires_grad_() for t in (x, weight, bias)]
    y = kata.LayerNormFunction.apply(*leaves, EPS)
    grads = kata.LayerNormFunction.backward(y.grad_fn, dy)
    assert [g.dtype for g in grads[:3]] == [torch.float16] * 3
    assert_all_close(grads[:3], want[1:], names=("dx", "dweight", "dbias"), rtol=2e-3, atol=2e-3)


def test_wide_rows(kata):
    """A row wider than a block of 1024 (N = 1100) is normalized and differentiated in full."""
    x, weight, bias, dy = make((2, 1100), seed=16)
    want = expected(x, weight, bias, dy)
    assert_all_close(run(kata, x, weight, bias, dy), want)


def test_module_like_nn_layernorm(kata):
    """LayerNorm(N) as nn.LayerNorm(N): normalized_shape (N,), eps 1e-5, weight ones and bias
    zeros, both parameters in the state_dict, and gradients through autograd."""
    mine, theirs = kata.LayerNorm(20), torch.nn.LayerNorm(20)
    assert mine.normalized_shape == theirs.normalized_shape == (20,)
    assert mine.eps == theirs.eps
    assert set(mine.state_dict()) == set(theirs.state_dict())
    assert {name for name, _ in mine.named_parameters()} == {"weight", "bias"}
    torch.testing.assert_close(mine.weight.detach(), theirs.weight.detach(), rtol=0, atol=0)
    torch.testing.assert_close(mine.bias.detach(), theirs.bias.detach(), rtol=0, atol=0)
    x, weight, bias, dy = make((2, 3, 20), seed=17)
    with torch.no_grad():
        for layer in (mine, theirs):
            layer.weight.copy_(weight)
            layer.bias.copy_(bias)
    xs = [x.clone().requires_grad_() for _ in range(2)]
    outs = [layer(v) for layer, v in zip((mine, theirs), xs, strict=True)]
    torch.testing.assert_close(outs[0], outs[1].detach(), rtol=1e-4, atol=1e-4)
    for out in outs:
        out.backward(dy)
    torch.testing.assert_close(xs[0].grad, xs[1].grad, rtol=1e-4, atol=1e-4)
    for name in ("weight", "bias"):
        got, want = getattr(mine, name).grad, getattr(theirs, name).grad
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_wrapper_default_eps(kata):
    """layer_norm's eps defaults to 1e-5, as F.layer_norm's: rows of variance 1e-6 show it."""
    x, weight, bias, _ = make((2, 20), scale=1e-3, shift=0.0, seed=18)
    want = F.layer_norm(x.double(), (20,), weight.double(), bias.double(), EPS)
    torch.testing.assert_close(kata.layer_norm(x, weight, bias), want.float(), rtol=1e-4, atol=1e-4)


def test_x_left_as_handed(kata):
    """forward writes y into a tensor of its own: the caller's x is left as it was."""
    torch.manual_seed(0)
    x = torch.randn(4, 64)
    before = x.clone()
    kata.LayerNormFunction.apply(x, torch.ones(64), torch.zeros(64), 1e-5)
    assert torch.equal(x, before)


def test_dy_left_as_handed(kata):
    """backward writes dx into a tensor of its own: the caller's dy is left as it was."""
    x, weight, bias, dy = make((3, 20), seed=19)
    handed = dy.clone()
    run(kata, x, weight, bias, handed)
    torch.testing.assert_close(handed, dy, rtol=0, atol=0)
