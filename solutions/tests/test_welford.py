"""Tests of Welford's streaming mean and variance with Chan's merge, written as its
specification: each test one property of `kata.Welford`, against torch.var_mean (or torch.var)
of every row the accumulator has seen.

The interview core first (a new accumulator, one batch, a stream of batches of any size, the
merge, NaN where torch.var gives NaN, reading changes nothing, nothing shared, float32 with a
large mean, the state's dtype and device), then torch parity: half-precision batches and any
correction.
"""

import warnings

import pytest
import torch

F64 = torch.float64


def data(rows, features, dtype=torch.float32, centre=1.0, spread=2.0, seed=0):
    """rows x features values of randn * spread + centre, in `dtype`, on the CPU."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, features, dtype=F64, generator=g) * spread + centre
    return x.to(dtype)


def fed(kata, features, batches, dtype=None):
    """A new Welford(features) given each batch (a copy of it) in turn."""
    w = kata.Welford(features) if dtype is None else kata.Welford(features, dtype=dtype)
    for x in batches:
        w.update(x.clone())
    return w


def variance(w, correction=1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns where count <= correction
        return w.var(correction=correction)


def expect_stats(w, rows, *, dtype=torch.float32, rtol=1e-5, atol=1e-5, var_rtol=None):
    """w's count, mean, var() and var(correction=0) are those of `rows`, all the rows seen
    (torch in float64, rounded to the state's dtype)."""
    assert int(w.count) == rows.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = {c: torch.var(rows.double(), 0, correction=c).to(dtype) for c in (1, 0)}
    mean = rows.double().mean(0).to(dtype)
    torch.testing.assert_close(w.mean, mean, rtol=rtol, atol=atol)
    for c, expected in want.items():
        got = w.var() if c == 1 else variance(w, 0)
        torch.testing.assert_close(got, expected, rtol=var_rtol or rtol, atol=atol)


def test_starts_empty(kata):
    """A new Welford(F) has count 0 (an int) and a zero (F,) mean in the dtype asked for."""
    for dtype in (torch.float32, F64):
        w = kata.Welford(5, dtype=dtype)
        assert int(w.count) == 0
        torch.testing.assert_close(w.mean, torch.zeros(5, dtype=dtype), rtol=0, atol=0)


def test_default_dtype_is_torchs(kata):
    """With no dtype, the state takes torch's default dtype, whatever it is set to."""
    default = torch.get_default_dtype()
    torch.set_default_dtype(F64)
    try:
        w = kata.Welford(3)
    finally:
        torch.set_default_dtype(default)
    assert w.mean.dtype == F64


def test_state_on_the_device_asked_for(kata):
    """Welford(F, device='cpu') keeps its state on the CPU when torch's default device is
    another (meta): the device argument is used for every tensor of the state."""
    torch.set_default_device("meta")
    try:
        w = kata.Welford(3, device="cpu")
    finally:
        torch.set_default_device(None)
    x = data(4, 3)
    w.update(x)
    assert w.mean.device.type == "cpu"
    expect_stats(w, x)


def test_count_is_an_int(kata):
    """count is an integer (a Python int or an integer tensor), never a float."""
    w = fed(kata, 3, [data(4, 3), data(2, 3, seed=1)])
    count = w.count
    if isinstance(count, torch.Tensor):
        assert not count.is_floating_point() and count.numel() == 1
    else:
        assert isinstance(count, int)
    assert int(count) == 6


def test_one_batch(kata):
    """After one update, count, mean and variances are the batch's, as torch.var_mean."""
    x = data(6, 5)
    expect_stats(fed(kata, 5, [x]), x)


def test_default_correction_is_one(kata):
    """var() is unbiased (correction=1), var(correction=0) biased, as torch.var."""
    x = data(4, 3)
    w = fed(kata, 3, [x])
    torch.testing.assert_close(w.var(), torch.var(x, 0), rtol=1e-5, atol=1e-6)
    w = fed(kata, 3, [x])
    torch.testing.assert_close(variance(w, 0), torch.var(x, 0, correction=0), rtol=1e-5, atol=1e-6)


def test_stream_of_batches(kata):
    """Batches of different sizes and means give the statistics of all their rows."""
    batches = [data(n, 4, centre=c, seed=n) for n, c in ((3, -2.0), (9, 1.0), (2, 4.0), (5, 0.0))]
    expect_stats(fed(kata, 4, batches), torch.cat(batches))


def test_batches_of_one_row(kata):
    """Batches of a single row each count like any other rows (their own M2 is 0)."""
    rows = data(4, 4)
    expect_stats(fed(kata, 4, list(rows.split(1))), rows)
    more = [data(3, 4, seed=1), rows[:1]]
    expect_stats(fed(kata, 4, more), torch.cat(more))


def test_empty_batch_changes_nothing(kata):
    """An empty batch (0 rows), first or later in the stream, changes nothing."""
    empty = torch.empty(0, 4)
    x, y = data(5, 4), data(3, 4, seed=1)
    expect_stats(fed(kata, 4, [empty, x, empty, y]), torch.cat([x, y]))


def test_one_row_unbiased_is_nan(kata):
    """With one row, var() is NaN (0 / 0) as torch.var's, and var(correction=0) is 0."""
    w = fed(kata, 3, [data(1, 3)])
    assert variance(w, 1).isnan().all()
    w = fed(kata, 3, [data(1, 3)])
    torch.testing.assert_close(variance(w, 0), torch.zeros(3), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, F64])
def test_no_rows_var_is_nan(kata, dtype):
    """With no rows seen (new, after an empty batch, two empty merged), every variance is NaN
    in the state's dtype; a warning is allowed, an exception is not."""

    def after_empty_batch():
        w = kata.Welford(4, dtype=dtype)
        w.update(torch.empty(0, 4, dtype=dtype))
        return w

    def two_empty_merged():
        w = kata.Welford(4, dtype=dtype)
        w.merge(kata.Welford(4, dtype=dtype))
        return w

    for build in (lambda: kata.Welford(4, dtype=dtype), after_empty_batch, two_empty_merged):
        for correction in (1, 0):
            got = variance(build(), correction)
            assert got.dtype == dtype and got.shape == (4,)
            assert got.isnan().all()


def test_merge_weights_by_counts(kata):
    """Merging 1 row into 7 gives the mean of the 8 rows, each side weighted by its count."""
    x, y = data(7, 4, centre=-1.0), data(1, 4, centre=5.0, seed=1)
    a, b = fed(kata, 4, [x]), fed(kata, 4, [y])
    a.merge(b)
    expect_stats(a, torch.cat([x, y]))


def test_merge_adds_the_spread_of_means(kata):
    """Merging two halves with different means gives the variance of the whole (Chan's
    δ² · n_a · n_b / n term), in either order."""
    x, y = data(4, 4, centre=-2.0), data(6, 4, centre=3.0, seed=1)
    for first, second in ((x, y), (y, x)):
        a, b = fed(kata, 4, [first]), fed(kata, 4, [second])
        a.merge(b)
        expect_stats(a, torch.cat([first, second]))


def test_merge_with_empty(kata):
    """Merging an empty accumulator, either way round, changes nothing; two empty ones merged
    stay usable."""
    x = data(5, 4)
    a = fed(kata, 4, [x])
    a.merge(kata.Welford(4))
    expect_stats(a, x)
    a = kata.Welford(4)
    a.merge(fed(kata, 4, [x]))
    expect_stats(a, x)
    a = kata.Welford(4)
    a.merge(kata.Welford(4))
    a.update(x.clone())
    expect_stats(a, x)


def test_merge_leaves_other_unmodified(kata):
    """After a.merge(b), later updates and merges of a leave b as it was."""
    x, y, z = data(4, 3), data(6, 3, centre=4.0, seed=1), data(5, 3, seed=2)
    for start in ([], [x]):
        for then in ("update", "merge"):
            b = fed(kata, 3, [y])
            a = fed(kata, 3, start)
            a.merge(b)
            if then == "update":
                a.update(z.clone())
            else:
                a.merge(fed(kata, 3, [z]))
            a.merge(fed(kata, 3, [x]))
            expect_stats(b, y)


def test_merge_takes_a_snapshot(kata):
    """After a.merge(b), later updates and merges of b leave a as it was."""
    x, y, z = data(4, 3), data(6, 3, centre=4.0, seed=1), data(5, 3, centre=-3.0, seed=2)
    for start in ([], [x]):
        for then in ("update", "merge"):
            a, b = fed(kata, 3, start), fed(kata, 3, [y])
            a.merge(b)
            if then == "update":
                b.update(z.clone())
            else:
                b.merge(fed(kata, 3, [z]))
            b.merge(fed(kata, 3, [x]))
            expect_stats(a, torch.cat([*start, y]))


def test_update_leaves_its_input(kata):
    """update leaves the caller's batch as it was, in the state's dtype too."""
    for dtype in (torch.float32, F64):
        w = kata.Welford(4, dtype=dtype)
        for n in (5, 1, 3):
            x = data(n, 4, dtype, seed=n)
            before = x.clone()
            w.update(x)
            torch.testing.assert_close(x, before, rtol=0, atol=0)


def test_reading_changes_nothing(kata):
    """Reading count, mean, var() and var(correction=0) again gives the same values."""
    w = fed(kata, 3, [data(4, 3)])
    first = (int(w.count), w.mean.clone(), w.var().clone(), variance(w, 0).clone())
    for _ in range(2):
        assert int(w.count) == first[0]
        torch.testing.assert_close(w.mean, first[1], rtol=0, atol=0)
        torch.testing.assert_close(w.var(), first[2], rtol=0, atol=0)
        torch.testing.assert_close(variance(w, 0), first[3], rtol=0, atol=0)


def test_statistics_follow_every_step(kata):
    """Statistics read between updates and merges follow each of them."""
    x, y, z = data(5, 4), data(3, 4, centre=3.0, seed=1), data(4, 4, centre=-2.0, seed=2)
    w = kata.Welford(4)
    seen = []
    for step, batch in (("update", x), ("update", y), ("merge", z)):
        if step == "update":
            w.update(batch.clone())
        else:
            w.merge(fed(kata, 4, [batch]))
        seen.append(batch)
        expect_stats(w, torch.cat(seen))


def test_large_mean_float32(kata):
    """In float32, at a mean of 1e4 and unit spread, the variance stays within 1% of float64's
    (no E[x²] - E[x]² shortcut), updates and a merge alike."""
    batches = [
        data(n, 16, centre=1e4, spread=1.0, seed=i)
        for i, n in enumerate((7, 1, 0, 13, 4, 32, 2, 9, 1, 64, 3))
    ]
    rows = torch.cat(batches)
    expect_stats(fed(kata, 16, batches), rows, var_rtol=1e-2)
    a, b = fed(kata, 16, batches[:5]), fed(kata, 16, batches[5:])
    a.merge(b)
    expect_stats(a, rows, var_rtol=1e-2)


def test_float64_state_computes_in_float64(kata):
    """A float64 state computes in float64, float32 batches too (cast before any arithmetic),
    through updates and a merge: torch.var_mean's float64 values to 1e-12."""
    sizes = (3, 2, 7, 2)
    rows = data(sum(sizes), 5, torch.float32, centre=0.3, spread=1.0)
    for batches in (list(rows.split(sizes)), list(rows.double().split(sizes))):
        a = fed(kata, 5, batches[:2], dtype=F64)
        a.merge(fed(kata, 5, batches[2:], dtype=F64))
        assert a.mean.dtype == F64
        expect_stats(a, rows.double(), dtype=F64, rtol=1e-12, atol=1e-13)


def test_keeps_its_dtype(kata):
    """A float32 state stays float32 when given float64 batches: the state's dtype wins."""
    batches = [data(n, 5, F64, seed=n) for n in (3, 1, 7, 2)]
    a = fed(kata, 5, batches[:2], dtype=torch.float32)
    a.merge(fed(kata, 5, batches[2:], dtype=torch.float32))
    assert a.mean.dtype == torch.float32
    assert a.var().dtype == torch.float32
    expect_stats(a, torch.cat(batches))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_batches(kata, dtype):
    """Torch parity: half batches accumulate in the state's float32, as the same values given
    as float32 batches (near 384, a half mean is off by steps of 0.25 or 2)."""
    batches = [data(n, 8, dtype, centre=384.0, spread=1.0, seed=n) for n in (5, 1, 9)]
    w = fed(kata, 8, batches)
    w32 = fed(kata, 8, [b.float() for b in batches])
    assert int(w.count) == int(w32.count)
    torch.testing.assert_close(w.mean, w32.mean, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(w.var(), w32.var(), rtol=1e-5, atol=1e-6)


def test_any_correction(kata):
    """Torch parity: var(correction=c) for any c, fractional or past the count, as torch.var
    (the divisor max(0, N - c): inf past N, never negative)."""
    x = data(3, 4)
    for c in (2, 0.5, 3, 5):
        want = torch.var(x.double(), 0, correction=c).float()
        torch.testing.assert_close(variance(fed(kata, 4, [x]), c), want, rtol=1e-5, atol=1e-6)
