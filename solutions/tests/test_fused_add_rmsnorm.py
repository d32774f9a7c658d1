"""Reference tests of the fused residual add + RMSNorm kata: a specification of
`fused_add_rms_norm`, property by property.

Each test takes the kata's module as `kata` and checks one property of
`kata.fused_add_rms_norm(x, residual, weight, eps=1e-6)` against the contract written out in
float64: the residual becomes h = x + residual rounded to x's dtype, in place, and y = h ·
rsqrt(mean(h²) + eps) · weight rounded to x's dtype. The pair returned and its tensors (y new,
the residual the caller's own, x untouched), the sum, the formula (of the sum, eps inside the
root, its default 1e-6), widths that are not a power of two and wider than one block, leading
dims and many rows, strided rows of x, float16 (float32 accumulation, the norm taken of the sum
as stored), a single vector.

The kernels run in Triton's interpreter on the CPU, one program at a time: the tensors are
small. No test uses bfloat16, whose arithmetic the interpreter gets wrong.
"""

import pytest
import torch

# float16 gets two ulps: scaling in float32, then multiplying by the weight in float16 (as
# vLLM does) rounds twice, and is correct.
TOL = {torch.float32: {"rtol": 1e-5, "atol": 1e-6}, torch.float16: {"rtol": 2e-3, "atol": 1e-3}}


def make(shape, dtype=torch.float32, *, scale=1.0, shift=0.0, seed=0):
    """x and a residual of this shape (randn · scale ± shift) in dtype, and a random weight
    (not ones, which would hide a weight used the wrong way) for the last dimension."""
    torch.manual_seed(seed)
    x = (torch.randn(shape, dtype=torch.float64) * scale + shift).to(dtype)
    residual = (torch.randn(shape, dtype=torch.float64) * scale - shift / 2).to(dtype)
    weight = (torch.randn(shape[-1], dtype=torch.float64) * 0.5 + 1.0).to(dtype)
    return x, residual, weight


def summed(x, residual):
    """x + residual, exact in float64, rounded once to x's dtype: what the residual must hold."""
    return (x.double() + residual.double()).to(x.dtype)


def normed(h, weight, eps=1e-6):
    """The RMSNorm of h (the sum as stored) times the weight, in float64."""
    h = h.double()
    return h * torch.rsqrt(h.square().mean(-1, keepdim=True) + eps) * weight.double()


def call(kata, x, residual, weight, **kwargs):
    """fused_add_rms_norm on x and a copy of the residual (updated in place); it returns the
    pair (y, residual), y a new tensor on x's device and the residual the very tensor given,
    and x is left as it was. (y, the residual as updated)."""
    x_before, mine = x.clone(), residual.clone()
    out = kata.fused_add_rms_norm(x, mine, weight, **kwargs)
    assert isinstance(out, tuple) and len(out) == 2, f"returned {type(out).__name__}, not a pair"
    y, res = out
    assert isinstance(y, torch.Tensor) and isinstance(res, torch.Tensor), "(y, residual) tensors"
    assert res is mine, "the residual returned is not the caller's residual tensor"
    assert y.device == x.device
    assert y.data_ptr() not in (x.data_ptr(), mine.data_ptr()), "y is not a new tensor"
    assert torch.equal(x, x_before), "x was modified"
    return y, mine


def check(kata, x, residual, weight, **kwargs):
    """y and the residual have x's shape and dtype, and the contract's values."""
    y, res = call(kata, x, residual, weight, **kwargs)
    for name, t in (("y", y), ("the residual", res)):
        assert t.shape == x.shape, f"{name} has shape {tuple(t.shape)}, x {tuple(x.shape)}"
        assert t.dtype == x.dtype, f"{name} is {t.dtype}, x {x.dtype}"
    h = summed(x, residual)
    torch.testing.assert_close(res, h, rtol=0, atol=0)
    torch.testing.assert_close(y, normed(h, weight, **kwargs).to(x.dtype), **TOL[x.dtype])
    return y, res


def test_returns_y_and_the_residual(kata):
    """The pair (y, residual) comes back in that order: y a new tensor of x's shape, dtype and
    device, the residual the caller's own tensor; x is not modified."""
    for shape in ((8, 64), (2, 3, 64)):
        x, residual, weight = make(shape)
        y, res = call(kata, x, residual, weight)
        assert y.shape == x.shape and y.dtype == x.dtype
        assert res.shape == x.shape and res.dtype == x.dtype


def test_residual_is_the_sum(kata):
    """The caller's residual ends up holding x + residual, rounded to its dtype, in place."""
    for shape in ((8, 64), (3, 100)):
        x, residual, weight = make(shape, seed=1)
        _, res = call(kata, x, residual, weight)
        assert not torch.equal(res, residual), "the residual was not updated"
        torch.testing.assert_close(res, summed(x, residual), rtol=0, atol=0)


def test_float16_residual_in_place(kata):
    """A float16 residual is updated in place in float16 (no float32 copy), x left as it was."""
    x, residual, weight = make((4, 64), torch.float16, seed=2)
    check(kata, x, residual, weight)


def test_formula(kata):
    """y is the norm of the sum, not of x: h · rsqrt(mean(h²) + eps) · weight."""
    x, residual, weight = make((8, 64), scale=2.0, shift=0.5, seed=3)
    check(kata, x, residual, weight)


def test_eps_inside_the_root(kata):
    """eps is what the caller passes, added to the mean square inside the square root: rows
    whose mean square is of eps's order show it."""
    for eps, scale in ((0.1, 0.1), (1e-2, 0.05)):
        x, residual, weight = make((4, 64), scale=scale, seed=4)
        check(kata, x, residual, weight, eps=eps)


def test_default_eps(kata):
    """eps defaults to 1e-6: rows whose mean square is near 1e-6 show it."""
    x, residual, weight = make((4, 64), scale=1e-3, shift=2.5e-4, seed=5)
    y, _ = call(kata, x, residual, weight)
    torch.testing.assert_close(y, normed(summed(x, residual), weight).float(), **TOL[x.dtype])


def test_zero_rows(kata):
    """Rows whose sum is zero give zeros, not NaN: eps keeps the root away from zero."""
    x, residual, weight = make((3, 20), seed=6)
    residual[0], residual[2] = -x[0], -x[2]
    y, _ = check(kata, x, residual, weight)
    assert not y.isnan().any()


@pytest.mark.parametrize("width", [20, 33, 100])
def test_width_not_a_power_of_two(kata, width):
    """Rows of a width between powers of two: the block's spare lanes are neither read nor
    written past the row, and count for nothing in the mean (divide by N, not by the block)."""
    x, residual, weight = make((5, width), scale=1.5, shift=0.3, seed=width)
    check(kata, x, residual, weight)


def test_eps_added_once(kata):
    """eps is added once to the mean square, not to each lane's square: with a large eps on a
    width of 77 (a block of 128) the difference shows."""
    x, residual, weight = make((3, 77), scale=0.1, seed=7)
    check(kata, x, residual, weight, eps=0.1)


@pytest.mark.parametrize("width", [1100, 4500])
def test_rows_wider_than_a_block(kata, width):
    """Rows wider than a block of 1024 or 4096 are added and normalized in full."""
    x, residual, weight = make((2, width), seed=8)
    check(kata, x, residual, weight)


@pytest.mark.parametrize("shape", [(2, 3, 20), (1, 37, 16), (2, 2, 3, 20)])
def test_leading_dims(kata, shape):
    """x with leading dims is added and normalized row by row: their product is the number of
    rows (6, 37, 12), not x.shape[0], and y comes back in x's shape."""
    x, residual, weight = make(shape, seed=9)
    check(kata, x, residual, weight)


def test_many_rows(kata):
    """267 rows, not a multiple of a grid's size: every one is added and normalized."""
    x, residual, weight = make((3, 89, 16), seed=10)
    check(kata, x, residual, weight)


def test_strided_rows(kata):
    """x may be a slice of a wider buffer, its rows further apart than N: read at x's row
    stride; the residual and y are contiguous, their rows N apart."""
    cases = (((6, 50), (slice(None), slice(0, 33))), ((2, 3, 40), (..., slice(0, 20))))
    for buffer_shape, index in cases:
        torch.manual_seed(11)
        buffer = torch.randn(buffer_shape) * 10 + 30  # its other columns are far from x's
        x = buffer[index]
        x.copy_(torch.randn(x.shape))
        assert not x.is_contiguous() and x.stride(-1) == 1
        residual = torch.randn(x.shape)
        weight = torch.randn(x.shape[-1]) * 0.5 + 1
        y, _ = check(kata, x, residual, weight)
        assert y.is_contiguous(), f"y has strides {y.stride()}: a new y is contiguous"


def test_float16(kata):
    """float16 x and residual: y and the residual in float16, right within float16's
    tolerance, at a width that is not a power of two."""
    x, residual, weight = make((6, 100), torch.float16, scale=2.0, seed=12)
    check(kata, x, residual, weight)


def test_float16_large_values(kata):
    """float16 inputs of magnitude ~300 do not overflow: their sums square past float16's
    largest value, 65504, so the squares are summed in float32."""
    x, residual, weight = make((4, 64), torch.float16, scale=300.0, seed=13)
    check(kata, x, residual, weight)


def test_norm_of_the_residual_as_stored(kata):
    """float16: y is the norm of the sum rounded to float16, as stored, its mean square included,
    not of the float32 sum. Integers near 1024 plus ±0.45 lose the fraction in float16; where
    x and the residual share a sign, every sum rounds towards zero."""
    g = torch.Generator().manual_seed(83)
    sign = torch.randint(0, 2, (2, 8, 64), generator=g) * 2.0 - 1.0
    sign[1, 4:] = sign[0, 4:]  # rows 4 to 7: the residual has x's sign
    x = (torch.randint(1024, 1536, (8, 64), generator=g) * sign[0]).half()
    residual = (0.45 * sign[1]).half()
    weight = torch.ones(64, dtype=torch.float16)
    y, _ = call(kata, x, residual, weight)
    want = normed(summed(x, residual), weight)
    # Rounded once from the right value y is within half an ulp of it; 0.6 leaves room for
    # float32 arithmetic. The norm of the float32 sum, or its mean square, lands over an ulp off.
    ulp = torch.exp2(torch.floor(torch.log2(want.abs()))) * torch.finfo(torch.float16).eps
    off = (y.double() - want).abs() / ulp
    assert off.max() <= 0.6, f"y is {off.max():.2f} ulp from the norm of the residual as stored"


def test_single_vector(kata):
    """A single vector x of shape (N,), one token, is one row."""
    for width in (64, 20):
        x, residual, weight = make((width,), seed=14)
        check(kata, x, residual, weight)
