"""Reference tests of the Triton softmax: a specification of the kata's layer, property by
property.

Each test takes the layer's module as `kata` and checks one property of `kata.SoftmaxFunction`
(through `kata.softmax`, which applies it, and the `kata.Softmax` module) against torch.softmax
computed in float64, and dx against torch's autograd of that softmax: the shapes and dtypes
(backward's own, called as autograd calls it), the formula, rows whose width is not a power of
two, the max subtracted (logits near +500), rows far below 0, backward's Σ dy · y term, x's
rows further apart than N and a transposed or expanded dy, leading dims and 133 rows, float16,
rows wider than any block (the running sum rescaled as the max grows; a row of 2²⁰ + 1, past
the widest block Triton allows), dx from the saved output, the inputs left as they were, and
the module.

The kernels run in Triton's interpreter on the CPU, one program after another: the tensors are
small (a few rows of 20 to 1000 columns) but for the 133 rows and the single wide rows, whose
tests come last. float32 and float16 only: the interpreter computes bfloat16 arithmetic wrongly,
and the grader does not judge a test that runs it.
"""

import math

import torch

F64 = torch.float64
WIDE = 70001  # wider than 65536, the widest block the contract allows, and odd
# y against the float64 reference, by dtype: (rtol, atol). float32's floor lies far below a
# row's typical probability (1 / N), so that a wrong sum shows even on a row of 70001; float16's
# rtol is two of its ulps (y is rounded once, at the store).
TOL = {torch.float32: (1e-4, 1e-7), torch.float16: (2e-3, 1e-4)}
# dx: the same rtol, but a floor for the elements where dy − Σ dy · y cancels (dx near 0, where
# the rounding of y and of the sum is all that is left).
GRAD_ATOL = {torch.float32: 1e-6, torch.float16: 1e-4}


def softmax_f64(x):
    """torch.softmax over the last dim, computed in float64."""
    return torch.softmax(x.double(), -1)


def grad_f64(x, dy):
    """dx of torch.softmax over the last dim, by torch's autograd in float64."""
    x64 = x.detach().double().requires_grad_()
    torch.softmax(x64, -1).backward(dy.double())
    return x64.grad


def forward_backward(kata, x, dy):
    """y = kata.softmax(x), then y.backward(dy): (y, dx), both detached. x keeps its strides."""
    x = x.detach().requires_grad_()
    y = kata.softmax(x)
    y.backward(dy)
    return y.detach(), x.grad


def expect_close(got, want, dtype=torch.float32, *, grad=False, rtol=None):
    """got (y, or dx where grad) is in dtype and matches want (float64) within dtype's
    tolerance; rtol, where given, replaces dtype's."""
    assert got.dtype == dtype, f"dtype {got.dtype}, expected {dtype}"
    default_rtol, atol = TOL[dtype]
    atol = GRAD_ATOL[dtype] if grad else atol
    torch.testing.assert_close(got.double(), want.double(), rtol=rtol or default_rtol, atol=atol)


def test_shapes_and_dtypes(kata):
    """y and dx have x's shape and dtype, for float32 and float16 and leading dims. backward is
    called here as autograd calls it, with y.grad_fn as its ctx: through y.backward(dy), autograd
    would quietly cast a dx of another dtype to x's."""
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float16):
        x = torch.randn(2, 3, 64).to(dtype).requires_grad_()
        y = kata.SoftmaxFunction.apply(x)
        assert y.shape == x.shape and y.dtype == dtype, f"y {tuple(y.shape)} {y.dtype}"
        dx = kata.SoftmaxFunction.backward(y.grad_fn, torch.randn(2, 3, 64).to(dtype))
        assert dx.shape == x.shape and dx.dtype == dtype, f"dx {tuple(dx.shape)} {dx.dtype}"


def test_matches_torch(kata):
    """float32 rows of 64 (one block) match torch.softmax: positive, summing to 1."""
    torch.manual_seed(0)
    for scale in (1.0, 4.0):
        x = torch.randn(4, 64) * scale
        y = kata.softmax(x)
        expect_close(y, softmax_f64(x))
        torch.testing.assert_close(y.double().sum(-1), torch.ones(4, dtype=F64), rtol=0, atol=1e-5)


def test_widths_between_powers_of_two(kata):
    """Rows that end mid-block (N = 20, 33, 77, 100, 130, 1000): the spare lanes of the last block
    are no part of the row, and every real column is written."""
    torch.manual_seed(0)
    for n in (20, 33, 77, 100, 130, 1000):
        x = torch.randn(3, n) * 2
        expect_close(kata.softmax(x), softmax_f64(x))


def test_large_logits(kata):
    """Logits near +500, or spread by 100: exp would overflow float32 (past 88.7) unless the
    row's max is subtracted first. rtol 3e-4: a correct kernel in base 2 (exp2 of x · log2(e))
    rounds x · log2(e) near 720, an ulp of 6e-5, in every exponent."""
    torch.manual_seed(0)
    x = torch.randn(4, 100)
    for big in (x * 2 + 500, x * 100):
        expect_close(kata.softmax(big), softmax_f64(big), rtol=3e-4)


def test_rows_far_below_zero(kata):
    """Rows whose values all lie near -1000 (widths 100 and 33, not powers of two) match
    torch.softmax: nothing but the row's own values may become its max (not a spare lane read
    as 0, not a running max started at 0), or every exp underflows to 0. rtol 3e-4 for a kernel
    in base 2, as in test_large_logits."""
    torch.manual_seed(0)
    for n in (100, 33):
        low = torch.randn(3, n) - 1000
        expect_close(kata.softmax(low), softmax_f64(low), rtol=3e-4)


def test_backward_matches_autograd(kata):
    """dx for a random dy matches torch's autograd of softmax in float64."""
    torch.manual_seed(0)
    for shape in ((3, 100), (2, 64), (2, 20)):
        x, dy = torch.randn(shape) * 2, torch.randn(shape)
        _, dx = forward_backward(kata, x, dy)
        expect_close(dx, grad_f64(x, dy), grad=True)


def test_constant_dy_gives_zero_dx(kata):
    """A dy that is the same along each row gives dx = 0: softmax's outputs sum to 1 whatever x
    is, so the Σ dy · y term cancels dy exactly."""
    torch.manual_seed(0)
    x = torch.randn(4, 64) * 2
    dy = torch.randn(4, 1).expand(4, 64).contiguous()
    _, dx = forward_backward(kata, x, dy)
    torch.testing.assert_close(dx, torch.zeros_like(dx), rtol=0, atol=1e-6)


def test_strided_x_and_dy(kata):
    """x whose rows lie further apart than N (a slice of a wider tensor), with dy transposed or
    expanded as autograd hands them: each is read where it is."""
    torch.manual_seed(0)
    wider = torch.randn(3, 128) * 2
    x = wider[:, :100]  # rows 128 apart
    dys = (torch.randn(100, 3).t(), torch.ones(()).expand(3, 100))
    for dy in dys:
        y, dx = forward_backward(kata, x, dy)
        expect_close(y, softmax_f64(x))
        expect_close(dx, grad_f64(x, dy), grad=True)
    # y.sum()'s dy is a single 1 with strides 0.
    xs = x.detach().requires_grad_()
    kata.softmax(xs).sum().backward()
    torch.testing.assert_close(xs.grad, torch.zeros_like(xs), rtol=0, atol=1e-6)


def test_leading_dims_and_many_rows(kata):
    """Every row is computed, forward and backward: x of shape (2, 2, 2, 32), and 133 rows in
    leading dims of 7 and 19, more than a grid of 128 programs takes in one pass."""
    torch.manual_seed(0)
    for shape in ((2, 2, 2, 32), (7, 19, 32)):
        x, dy = torch.randn(shape), torch.randn(shape)
        y, dx = forward_backward(kata, x, dy)
        expect_close(y, softmax_f64(x))
        expect_close(dx, grad_f64(x, dy), grad=True)


def test_float16(kata):
    """float16 x and dy give y and dx in float16, within float16's tolerance."""
    torch.manual_seed(0)
    for n in (100, 20):
        x = (torch.randn(2, n) * 2).half()
        dy = torch.randn(2, n).half()
        y, dx = forward_backward(kata, x, dy)
        expect_close(y, softmax_f64(x), torch.float16)
        expect_close(dx, grad_f64(x, dy), torch.float16, grad=True)


def test_max_grows_along_a_wide_row(kata):
    """A row of 70001 that rises along its length: its max grows in (nearly) every block, so the
    running sum must be rescaled each time, whatever the block (at most 65536)."""
    torch.manual_seed(0)
    j = torch.arange(WIDE, dtype=torch.float32)
    x = (60 * j / WIDE + torch.randn(WIDE) / 4).unsqueeze(0)
    y = kata.softmax(x)
    expect_close(y, softmax_f64(x))


def test_peak_in_the_first_block_of_a_wide_row(kata):
    """A row of 70001 whose first element is 100: the max subtracted is the whole row's, a
    running max that a later, lower block never lowers (exp(100 − 4) overflows float32)."""
    torch.manual_seed(0)
    x = torch.randn(1, WIDE)
    x[:, 0] = 100.0
    expect_close(kata.softmax(x), softmax_f64(x))


def test_wide_row_forward_and_backward(kata):
    """A row of 70001 whose max is its first element: every column is computed, forward and
    backward, in as many blocks as the row needs."""
    torch.manual_seed(0)
    x = torch.randn(1, WIDE)
    x[:, 0] = 8.0
    dy = torch.randn(1, WIDE)
    y, dx = forward_backward(kata, x, dy)
    expect_close(y, softmax_f64(x))
    expect_close(dx, grad_f64(x, dy), grad=True)


def test_row_wider_than_triton_allows_in_one_block(kata):
    """A row of 2²⁰ + 1 columns (a vocabulary that large): one block sized to the whole row would
    take 2²¹ lanes, past the 2²⁰ elements Triton allows in a block, so the row must be walked in
    blocks. Forward only: one program, in blocks of many lanes."""
    torch.manual_seed(0)
    x = torch.randn(1, 2**20 + 1)
    expect_close(kata.softmax(x), softmax_f64(x))


def test_backward_uses_the_output(kata):
    """Backward needs y, not x: x changed in place after forward leaves dx as it was (autograd
    refuses to run a backward that saved x, which the change made stale)."""
    torch.manual_seed(0)
    x, dy = torch.randn(3, 100), torch.randn(3, 100)
    want = grad_f64(x, dy)
    xs = x.clone().requires_grad_()
    y = kata.softmax(xs)
    with torch.no_grad():
        xs.add_(1.0).mul_(3.0)
    y.backward(dy)
    expect_close(xs.grad, want, grad=True)


def test_inputs_left_as_they_were(kata):
    """forward leaves x as it was, and backward leaves dy: autograd may hand them to others."""
    torch.manual_seed(0)
    x, dy = torch.randn(3, 100), torch.randn(3, 100)
    x0, dy0 = x.clone(), dy.clone()
    forward_backward(kata, x, dy)
    assert torch.equal(x, x0), "forward changed x"
    assert torch.equal(dy, dy0), "backward changed dy"


def test_module_and_vector(kata):
    """Softmax() is nn.Softmax(dim=-1): dim -1, no state, the same values; a vector of N is one
    row, and gradients flow through it."""
    torch.manual_seed(0)
    module = kata.Softmax()
    assert module.dim == -1
    assert len(module.state_dict()) == 0
    x = torch.randn(2, 3, 64)
    expect_close(module(x), softmax_f64(x))
    v = torch.randn(64, requires_grad=True)
    y = kata.softmax(v)
    assert y.shape == (64,)
    expect_close(y, softmax_f64(v))
    dy = torch.randn(64)
    y.backward(dy)
    expect_close(v.grad, grad_f64(v, dy), grad=True)
    assert math.isclose(y.sum().item(), 1.0, rel_tol=1e-5)
