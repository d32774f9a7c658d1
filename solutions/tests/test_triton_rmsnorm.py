"""Reference tests of the Triton RMSNorm kata: a specification of `rms_norm`, property by property.

Each test takes the kata's module as `kata` and checks one property of
`kata.rms_norm(x, weight, eps=1e-6)` against the contract written out in float64,
x · rsqrt(mean(x²) + eps) · weight, rounded to x's dtype: the output's shape and dtype, the
formula (eps inside the root, its default 1e-6, the weight), widths that are not a power of two
(the block's spare lanes) and wider than one block, leading dims and many rows (one program
per row, however many), strided rows, float16 (float32 accumulation), a single vector, and the
input left as it was.

The kernels run in Triton's interpreter on the CPU, one program at a time: the tensors are
small. No test uses bfloat16, whose arithmetic the interpreter gets wrong.
"""

import pytest
import torch

# float16 gets two ulps: normalizing in float32, then multiplying by the weight in float16 (as
# Hugging Face's LLaMA does) rounds twice, and is correct.
TOL = {torch.float32: {"rtol": 1e-5, "atol": 1e-6}, torch.float16: {"rtol": 2e-3, "atol": 1e-3}}


def make(shape, dtype=torch.float32, *, scale=1.0, shift=0.0, seed=0):
    """x of this shape (randn · scale + shift) in dtype, and a random weight (not ones, which
    would hide a weight used the wrong way) for its last dimension."""
    torch.manual_seed(seed)
    x = (torch.randn(shape, dtype=torch.float64) * scale + shift).to(dtype)
    weight = (torch.randn(shape[-1], dtype=torch.float64) * 0.5 + 1.0).to(dtype)
    return x, weight


def expected(x, weight, eps=1e-6):
    """The contract in float64, rounded once to x's dtype."""
    x64 = x.double()
    y = x64 * torch.rsqrt(x64.square().mean(-1, keepdim=True) + eps) * weight.double()
    return y.to(x.dtype)


def check(kata, x, weight, **kwargs):
    """rms_norm's output has x's shape and dtype, and the contract's values."""
    y = kata.rms_norm(x, weight, **kwargs)
    assert y.shape == x.shape, f"x {tuple(x.shape)} gave an output of shape {tuple(y.shape)}"
    assert y.dtype == x.dtype, f"x in {x.dtype} gave an output in {y.dtype}"
    torch.testing.assert_close(y, expected(x, weight, **kwargs), **TOL[x.dtype])


def test_output_like_input(kata):
    """The output has x's shape and dtype, for 2-D x and with leading dims."""
    for shape in ((8, 64), (2, 3, 64)):
        x, weight = make(shape)
        y = kata.rms_norm(x, weight)
        assert y.shape == x.shape
        assert y.dtype == x.dtype


def test_formula(kata):
    """float32 rows of a power-of-two width: x · rsqrt(mean(x²) + eps) · weight, the weight
    elementwise and the same for every row."""
    x, weight = make((8, 64), scale=2.0, shift=0.5)
    check(kata, x, weight)


def test_eps_inside_the_root(kata):
    """eps is what the caller passes, added to the mean square inside the square root: rows
    whose mean square is of eps's order show it."""
    for eps, scale in ((0.1, 0.1), (1e-2, 0.05)):
        x, weight = make((4, 64), scale=scale, seed=1)
        check(kata, x, weight, eps=eps)


def test_default_eps(kata):
    """eps defaults to 1e-6 (not LayerNorm's 1e-5, not 0): rows whose mean square is near 1e-6
    show which."""
    x, weight = make((4, 64), scale=1e-3, shift=2.5e-4, seed=2)
    y = kata.rms_norm(x, weight)
    torch.testing.assert_close(y, expected(x, weight, eps=1e-6), **TOL[torch.float32])


def test_zero_rows(kata):
    """A row of zeros gives zeros, not NaN: eps keeps the root away from zero."""
    x = torch.zeros(3, 20)
    x[1] = torch.linspace(-1.0, 1.0, 20)
    weight = torch.ones(20)
    y = kata.rms_norm(x, weight)
    assert not y.isnan().any()
    torch.testing.assert_close(y, expected(x, weight), **TOL[torch.float32])


@pytest.mark.parametrize("width", [20, 33, 100])
def test_width_not_a_power_of_two(kata, width):
    """Rows of a width between powers of two: the block's spare lanes are neither read past the
    row nor counted in the mean (divide by N, not by the block)."""
    x, weight = make((5, width), scale=1.5, shift=0.3, seed=width)
    check(kata, x, weight)


def test_eps_added_once(kata):
    """eps is added once to the mean square, not to each lane's square: with a large eps on a
    width of 77 (a block of 128) the difference shows."""
    x, weight = make((3, 77), scale=0.1, seed=3)
    check(kata, x, weight, eps=0.1)


@pytest.mark.parametrize("width", [1100, 4500])
def test_rows_wider_than_a_block(kata, width):
    """Rows wider than a block of 1024 or 4096 are normalized in full, every column."""
    x, weight = make((2, width), seed=4)
    check(kata, x, weight)


@pytest.mark.parametrize("shape", [(2, 3, 20), (2, 2, 3, 20)])
def test_leading_dims(kata, shape):
    """x with leading dims is normalized row by row: their product is the number of rows, not
    x.shape[0], and the output comes back in x's shape."""
    x, weight = make(shape, seed=5)
    check(kata, x, weight)


def test_many_rows(kata):
    """267 rows: more than a fixed grid of programs takes in one or two passes, and every one is
    normalized."""
    x, weight = make((3, 89, 16), seed=6)
    check(kata, x, weight)


def test_strided_rows(kata):
    """x may be a slice of a wider buffer, its rows further apart than N: read at x's row stride,
    written at the output's."""
    cases = (((6, 50), (slice(None), slice(0, 33))), ((2, 3, 40), (..., slice(0, 20))))
    for buffer_shape, index in cases:
        torch.manual_seed(7)
        buffer = torch.randn(buffer_shape) * 10 + 30  # its other columns are far from x's
        x = buffer[index]
        x.copy_(torch.randn(x.shape))
        assert not x.is_contiguous() and x.stride(-1) == 1
        weight = torch.randn(x.shape[-1]) * 0.5 + 1
        check(kata, x, weight)


def test_float16(kata):
    """A float16 input comes back in float16, right within float16's tolerance, at a width that
    is not a power of two."""
    x, weight = make((6, 100), torch.float16, scale=2.0, seed=8)
    check(kata, x, weight)


def test_float16_large_values(kata):
    """A float16 input of magnitude ~300 does not overflow: 300² = 90000 is past float16's
    largest value, 65504, so the squares are summed in float32."""
    x, weight = make((4, 64), torch.float16, scale=300.0, seed=9)
    check(kata, x, weight)


def test_single_vector(kata):
    """A single vector x of shape (N,) is one row, as F.rms_norm takes it."""
    for width in (64, 20):
        x, weight = make((width,), seed=10)
        check(kata, x, weight)


def test_input_unmodified(kata):
    """rms_norm leaves x and the weight as they were."""
    x, weight = make((4, 33), seed=11)
    x_before, weight_before = x.clone(), weight.clone()
    kata.rms_norm(x, weight)
    assert torch.equal(x, x_before)
    assert torch.equal(weight, weight_before)
