"""Hidden checks for the Welford kata, each compared with torch.var_mean over every row seen.

The expected statistics are torch.var_mean of the concatenated rows, computed in float64 and
rounded once to the state's dtype. Interview core first, then torch parity
(@pytest.mark.parity): half-precision batches and any correction, as torch.var takes it.

Each core property, by how the rows arrive:

    property                  update (a stream)                  merge (two accumulators)
    count, mean, var          one_batch, stream_of_batches       merge_weights_by_counts,
                                                                 merge_spread_of_means
    batch of one / empty      batch_of_one, empty_batch          merge_with_empty
    read between steps        statistics_follow_every_step       statistics_follow_every_step
    read twice                reading_changes_nothing            reading_changes_nothing
    nothing shared            update_leaves_its_input            merge_leaves_other_unmodified,
                                                                 merge_takes_a_snapshot
    NaN with one sample       one_sample_unbiased                one_sample_unbiased
    NaN with no rows          var_of_no_rows                     var_of_no_rows
    large mean in float32     large_mean_float32                 large_mean_float32
    dtype, device             computes_in_float64, keeps_its_dtype, follows_device (both ways)

The memory check counts every value reachable from the accumulator (values_held: containers,
attributes, slots, closures): it fails a state that grows with the rows, or one that holds more
tensor elements than 8 per feature.

The accuracy bound at a mean of 1e4 (float32 data of unit spread): the variance within 1e-2
relative of float64's, the mean within float32's usual 1e-5. Measured over 100 seeds and
several batch layouts, correct files (a per-sample Welford loop, two-pass batches merged by
Chan's formula, torch.var_mean per batch with Chan, tree-ordered merges) stay under 1.7e-3; the
naive E[x²] − E[x]² is off by 30 to 50 times the variance itself, and the batched product
form Σ (x − old mean)(x − new mean) by about 1. At a mean of 1e6 no float32 state is exact
(correct files are off by 2 to 13%), so the check stays at 1e4.
"""

import gc
import inspect
import operator
import types
import warnings

import pytest
import torch

from norm_katas.checks import (
    PerfCase,
    Suite,
    count_ops,
    count_python_lines,
    dtype_name,
    expect_close,
    expect_function_follows_device,
    expect_tensor,
    fail,
    fail_for,
    shape_of,
)

SUITE = Suite()

# The batches of the stream checks: sizes that differ, a batch of one and an empty batch.
SIZES = (7, 1, 0, 13, 4, 32, 2, 9, 1, 64, 3)


MISSING = object()  # an attribute that getattr_static does not find
# What the contract names each member the checks read: a missing one is said so, by name.
MEMBERS = {
    "count": "the number of rows seen (an int)",
    "mean": "the (F,) tensor of the running means",
    "update": "the method that adds a batch",
    "merge": "the method that adds another Welford's rows",
    "var": "the method that gives the variance",
}


def test_starts_empty(kata, device):
    """a new Welford(F) has count 0 and a zero (F,) mean, in the dtype asked for or torch's default

    The accumulator has seen no rows yet: its count is the int 0, its mean F zeros, allocated
    with the factory arguments (device, dtype) as torch's modules take them: with none, in
    torch's default dtype, whatever it is set to, not a fixed float32.

    count = 0; mean = zeros of shape (F,) with the given device and dtype; M2 likewise.
    """
    for dtype in (None, torch.float64):
        w = welford(kata, 5, device, dtype)
        given = f"Welford(5, dtype={dtype_name(dtype) if dtype else 'default'})"
        if count_of(w, given) != 0:
            fail(f"{given}: count is {count_of(w, given)}, expected 0 before any update.")
        want = torch.zeros(5, device=device, dtype=dtype or torch.get_default_dtype())
        expect_close(mean_of(w, given), want, given=given, what="mean")
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        w = welford(kata, 5, device)
    finally:
        torch.set_default_dtype(default)
    given = "Welford(5) made under torch.set_default_dtype(torch.float64)"
    want = torch.zeros(5, device=device, dtype=torch.float64)
    expect_close(mean_of(w, given), want, given=given, what="mean")


def test_reading_changes_nothing(kata, device):
    """reading count, mean and var() changes nothing: the same values however often they are read

    var() answers M2 / (N − correction) from the state; dividing the stored M2 itself (M2 /= n,
    or an in-place div_) answers right once, and then every later read, and every update on
    top of it, starts from the wrong M2.

    var(correction) returns a new tensor, M2 / (N − correction); count, mean and M2 change only
    in update and merge.
    """
    x = data(4, 3, device)
    w = feed(welford(kata, 3, device), [x])
    given = "Welford(3) after update(x (4, 3))"
    reads = {
        "count": lambda: torch.tensor(count_of(w, given)),
        "mean": lambda: mean_of(w, given).clone(),
        "var()": lambda: expect_tensor(w.var(), "var()").clone(),
        "var(correction=0)": lambda: expect_tensor(
            w.var(correction=0), "var(correction=0)"
        ).clone(),
    }
    first = {what: read() for what, read in reads.items()}
    for what, read in [*reads.items(), *reads.items()]:
        again = read()
        if not torch.equal(again, first[what]):
            now, before = (
                ", ".join(f"{v:.6g}" for v in t.flatten().tolist()) for t in (again, first[what])
            )
            fail(
                f"{given}: {what} read again is [{now}], but it was [{before}] the first time: "
                "reading the statistics changed them. Leave the state alone in var() and in "
                "the properties: compute into new tensors, no /= or in-place ops."
            )


def test_correction(kata, device):
    """var() is unbiased by default (correction=1), var(correction=0) biased, as torch.var

    torch.var divides the sum of squared deviations by N − correction, with correction=1 (the
    sample variance) unless told otherwise: the two differ by the factor N / (N − 1).

    var(correction) = M2 / (N − correction); the default correction is 1.
    """
    x = data(4, 3, device)
    w = feed(welford(kata, 3, device), [x])
    given = "Welford(3) after update(x (4, 3))"
    # Each compared with the learner's own M2, so that only the divisor is checked here.
    unbiased = expect_tensor(w.var(correction=1), "var(correction=1)")
    expect_close(w.var(), unbiased, given=given, what="var() (the default correction, 1)")
    got = expect_tensor(w.var(correction=0), "var(correction=0)")
    expect_close(got, unbiased * 3 / 4, given=given, what="var(correction=0) = var() · 3 / 4")


def test_one_batch(kata, device):
    """after one update, count, mean and var() are those of the batch, as torch.var_mean

    One batch of B rows: the count is B and the mean and variance are per feature, over
    dim 0.

    mean = Σ x / B and M2 = Σ (x − mean)² over the rows; var(correction) = M2 / (B − correction).
    """
    x = data(6, 5, device)
    expect_stats(feed(welford(kata, 5, device), [x]), x, given="Welford(5) after update(x (6, 5))")


def test_update_leaves_its_input(kata, device):
    """update leaves the caller's batch as it was, in any dtype

    The batch belongs to the caller, who may log it, train on it or hand it to another
    accumulator: changing it in place (centring it, say) overwrites their data. A cast to the
    dtype the batch already has makes no copy: it is the caller's tensor itself.

    The batch's deviations x − mean_b are a new tensor; work in place only on tensors the update
    made itself.
    """
    for dtype in (torch.float32, torch.float64):
        feed(welford(kata, 4, device, dtype), [data(n, 4, device, dtype) for n in (5, 1, 3)])


def test_stream_of_batches(kata, device):
    """updates with batches of different sizes give the statistics of all their rows together

    The running mean is over rows, not over batches: a batch of 9 rows counts 9 times as
    much as a batch of 1, and the variance includes the spread between the batches' means.

    With n = n_a + n_b and δ = mean_b − mean_a: mean = mean_a + δ · n_b / n and
    M2 = M2_a + M2_b + δ² · n_a · n_b / n.
    """
    batches = [data(n, 4, device, centre=c) for n, c in ((3, -2.0), (9, 1.0), (2, 4.0), (5, 0.0))]
    given = "Welford(4) after updates of (3, 4), (9, 4), (2, 4), (5, 4) batches"
    expect_stats(feed(welford(kata, 4, device), batches), torch.cat(batches), given=given)


def test_batch_of_one(kata, device):
    """a batch of one row updates the statistics: its own M2 (spread) is 0, not NaN

    A single row has a mean (itself) and a sum of squared deviations (0); only its unbiased
    variance, 0 / 0, is undefined. Merge its count, mean and M2.

    For B = 1: mean_b = x, M2_b = 0; then the usual merge with n_b = 1.
    """
    batches = [data(n, 4, device) for n in (3, 1, 1, 4)]
    given = "Welford(4) after updates of (3, 4), (1, 4), (1, 4), (4, 4) batches"
    expect_stats(feed(welford(kata, 4, device), batches), torch.cat(batches), given=given)
    first = data(1, 4, device)
    given = "Welford(4) after update(x (1, 4)) then update(x (5, 4))"
    more = data(5, 4, device)
    expect_stats(
        feed(welford(kata, 4, device), [first, more]), torch.cat([first, more]), given=given
    )


def test_empty_batch(kata, device):
    """an empty batch (0 rows) changes nothing: no NaN from its 0 / 0 mean

    A batch with no rows has no mean: adding it must leave count, mean and M2 as they were,
    first in the stream or later.

    With n_b = 0 there is nothing to merge: return before dividing by n_b.
    """
    empty = torch.empty(0, 4, device=device)
    x, y = data(5, 4, device), data(3, 4, device)
    given = "Welford(4) after updates of (0, 4), (5, 4), (0, 4), (3, 4) batches"
    expect_stats(
        feed(welford(kata, 4, device), [empty, x, empty, y]), torch.cat([x, y]), given=given
    )


def test_merge_spread_of_means(kata, device):
    """merge adds the spread between the two means: Chan's δ² · n_a · n_b / n term

    Two halves with different means: the variance of the whole is the spread within each half
    plus the spread of the halves' means around the merged mean. Use the counts before the
    merge, and δ before the mean moves.

    M2 = M2_a + M2_b + δ² · n_a · n_b / n, with δ = mean_b − mean_a and n = n_a + n_b.
    """
    # Equal counts: however the means are weighted, only the spread term can be missing.
    x, y = data(4, 4, device, centre=-2.0), data(4, 4, device, centre=3.0)
    a, b = feed(welford(kata, 4, device), [x]), feed(welford(kata, 4, device), [y])
    a.merge(b)
    expect_stats(a, torch.cat([x, y]), given="a (4 rows).merge(b (4 rows)), Welford(4)")


def test_merge_weights_by_counts(kata, device):
    """merge weights each side's mean by its count, not the two sides equally

    Merging an accumulator of 1 row into one of 7 gives the mean of the 8 rows: the
    7-row side counts 7 times as much as the other.

    mean = mean_a + (mean_b − mean_a) · n_b / (n_a + n_b).
    """
    x, y = data(7, 4, device, centre=-1.0), data(1, 4, device, centre=5.0)
    a, b = feed(welford(kata, 4, device), [x]), feed(welford(kata, 4, device), [y])
    a.merge(b)
    expect_stats(a, torch.cat([x, y]), given="a (7 rows).merge(b (1 row)), Welford(4)")


def test_merge_with_empty(kata, device):
    """merging with an empty accumulator, either way round, changes nothing

    An accumulator that has seen no rows adds nothing, and one that has seen none takes the
    other's statistics; two empty ones stay empty and usable, with no 0 / 0.

    With n_b = 0, return as it is; with n_a = 0 the formulas give the other's (count, mean,
    M2); with n = 0, divide by nothing.
    """
    x = data(5, 4, device)
    a = feed(welford(kata, 4, device), [x])
    a.merge(welford(kata, 4, device))
    expect_stats(a, x, given="a (5 rows).merge(Welford(4)), an empty one")
    a = welford(kata, 4, device)
    a.merge(feed(welford(kata, 4, device), [x]))
    expect_stats(a, x, given="Welford(4), an empty one, .merge(b (5 rows))")
    a = welford(kata, 4, device)
    a.merge(welford(kata, 4, device))
    a.update(x)
    expect_stats(a, x, given="two empty Welford(4) merged, then update(x (5, 4))")


def test_merge_leaves_other_unmodified(kata, device):
    """merge leaves the other accumulator as it was, and shares no tensor with it

    Merging b into a changes a only: b may be merged again elsewhere (a tree of merges, another
    rank's copy). Taking b's tensors as a's own and then changing a in place (the next merge,
    the next update) would change b.

    Build a's new mean and M2 as new tensors (mean_a + δ · n_b / n), or copy b's.
    """
    x, y, z = data(4, 3, device), data(6, 3, device, centre=4.0), data(5, 3, device)
    for first in (None, x):
        for then in ("a.update(z)", "a.merge(c)"):  # what changes a first after the merge
            b = feed(welford(kata, 3, device), [y])
            a = feed(welford(kata, 3, device), [] if first is None else [first])
            a.merge(b)
            if then == "a.update(z)":
                feed(a, [z])
            else:
                a.merge(feed(welford(kata, 3, device), [z]))
            a.merge(feed(welford(kata, 3, device), [x]))
            side = "an empty a" if first is None else "a (4 rows)"
            expect_stats(b, y, given=f"b (6 rows) after {side}.merge(b), {then}, a.merge(d)")


def test_merge_takes_a_snapshot(kata, device):
    """after a.merge(b), updating b or merging into b leaves a as it was

    a takes the rows b has seen so far, as numbers: b goes on (more batches, more merges) on
    its own. A reference to b kept for later, or b's tensors taken as a's own while b changes
    them in place, lets b's later rows leak into a.

    Combine b's count, mean and M2 into a's state at the merge, in new tensors (or copies).
    """
    x, y, z = data(4, 3, device), data(6, 3, device, centre=4.0), data(5, 3, device, centre=-3.0)
    for first in (None, x):
        for then in ("b.update(z)", "b.merge(c)"):  # what changes b first after the merge
            a = feed(welford(kata, 3, device), [] if first is None else [first])
            b = feed(welford(kata, 3, device), [y])
            a.merge(b)
            if then == "b.update(z)":
                feed(b, [z])
            else:
                b.merge(feed(welford(kata, 3, device), [z]))
            b.merge(feed(welford(kata, 3, device), [x]))
            side = "an empty a" if first is None else "a (4 rows)"
            given = f"{side}.merge(b (6 rows)), then {then} and b.merge(d)"
            expect_stats(a, y if first is None else torch.cat([x, y]), given=given)


def test_statistics_follow_every_step(kata, device):
    """count, mean and var() read between updates and merges follow each of them

    Reading the statistics must not freeze them: a value computed on its first read and kept
    (a cached property, or a cache that update or merge does not clear) is stale once the
    next batch arrives.

    mean and var(correction) from the current count, mean and M2 on every read, or a cache
    cleared wherever count, mean or M2 change.
    """
    x, y, z, v = (
        data(n, 4, device, centre=c) for n, c in ((5, 1.0), (3, 3.0), (4, -2.0), (2, 0.0))
    )
    w, rows, done = feed(welford(kata, 4, device), [x]), [x], ["update(x (5, 4))"]
    for step, batch in (("update(y (3, 4))", y), ("merge(b (4 rows))", z), ("update(v (2, 4))", v)):
        given = f"Welford(4) after {', '.join(done)}"
        expect_stats(w, torch.cat(rows), given=given)
        read = {"mean": mean_of(w, given).clone(), "var()": w.var().clone()}
        if step.startswith("merge"):
            w.merge(feed(welford(kata, 4, device), [batch]))
        else:
            feed(w, [batch])
        rows.append(batch)
        done.append(step)
        given = f"Welford(4) after {', '.join(done)}, read after each"
        for what, now in (("mean", mean_of(w, given)), ("var()", w.var())):
            if torch.equal(now, read[what]):
                fail(
                    f"{given}: {what} is still the value read before {step}. Is it computed "
                    "once, on the first read, and kept?"
                )
        expect_stats(w, torch.cat(rows), given=given)


def test_one_sample_unbiased(kata, device):
    """var() of one row is NaN, as torch.var's (0 / 0); var(correction=0) is 0

    With N = 1 the unbiased variance divides 0 by N − 1 = 0: torch answers NaN (with a
    warning), neither an error nor 0.

    var(correction) = M2 / max(0, N − correction) as a tensor division: 0 / 0 gives NaN.
    """
    x = data(1, 3, device)
    w = feed(welford(kata, 3, device), [x])
    expect_stats(w, x, given="Welford(3) after update(x (1, 3))")


def test_var_of_no_rows(kata, device):
    """var() of an empty accumulator (0 rows seen) is NaN for every correction, as torch.var's

    With N = 0 every variance is 0 / 0: torch.var of no rows answers NaN (with a warning),
    neither 0 nor an error. A new accumulator, one given an empty batch and two empty ones
    merged have all seen no rows.

    var(correction) = M2 / max(0, N − correction) as a tensor division: 0 / 0 gives NaN.
    """
    for dtype in (torch.float32, torch.float64):
        name = f"Welford(4, dtype={dtype_name(dtype)})"
        empty = welford(kata, 4, device, dtype)
        empty.merge(welford(kata, 4, device, dtype))
        ways = {
            f"{name}, new": welford(kata, 4, device, dtype),
            f"{name} after update(x (0, 4))": feed(
                welford(kata, 4, device, dtype), [torch.empty(0, 4, device=device, dtype=dtype)]
            ),
            f"two empty {name} merged": empty,
        }
        nan = torch.full((4,), float("nan"), device=device, dtype=dtype)
        for given, w in ways.items():
            for call, correction in (("var()", 1), ("var(correction=0)", 0)):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        got = w.var() if correction == 1 else w.var(correction=0)
                except NotImplementedError:
                    raise
                except Exception as e:
                    fail(
                        f"{given}: {call} raised {type(e).__name__}: {e}. With no rows it is NaN "
                        "(0 / 0), as torch.var's: a warning is allowed, an exception is not."
                    )
                expect_close(got, nan, given=given, what=call)


def test_large_mean_float32(kata, device):
    """stays accurate in float32 when the mean is large (1e4): no E[x²] − E[x]² shortcut

    Around 1e4 the squares are 1e8, where float32's steps are 8 wide: Σ x² / N − mean² loses
    every digit of a variance of 1. Center on a mean before squaring: each batch on its own,
    or each row on the running mean.

    M2_b = Σ (x − mean_b)², merged with Chan's formula; or, row by row, δ = x − mean,
    mean += δ / n, M2 += δ · (x − mean).
    """
    batches = [data(n, 16, device, centre=1e4, spread=1.0) for n in SIZES]
    rows = torch.cat(batches)
    sizes = ", ".join(map(str, SIZES))
    given = (
        f"Welford(16) after updates of {len(SIZES)} batches of 1e4 + randn ({sizes} rows), float32"
    )
    expect_stats(feed(welford(kata, 16, device), batches), rows, given=given, var_rtol=1e-2)
    a, b = (
        feed(welford(kata, 16, device), batches[:5]),
        feed(welford(kata, 16, device), batches[5:]),
    )
    a.merge(b)
    given = "a.merge(b), Welford(16), on 1e4 + randn in float32, 5 batches and 6 batches"
    expect_stats(a, rows, given=given, var_rtol=1e-2)


def test_computes_in_float64(kata, device):
    """a float64 Welford computes in float64, float32 batches too: var_mean's values to 1e-10

    Every tensor the state holds and every ratio of counts must stay in float64: a count or a
    batch statistic rounded to float32 shows at the 8th digit. A float32 batch is cast up to
    the state's dtype before its mean is taken, not after.

    Keep count an int (n_b / n is then a double), and cast each batch to the state's dtype,
    float64, before any arithmetic.
    """
    for batch_dtype in (torch.float64, torch.float32):
        batches = [data(n, 5, device, batch_dtype, centre=0.0, spread=1.0) for n in (3, 1, 7, 2)]
        w = feed(welford(kata, 5, device, torch.float64), batches[:2])
        w.merge(feed(welford(kata, 5, device, torch.float64), batches[2:]))
        name = dtype_name(batch_dtype)
        given = f"Welford(5, dtype=float64) after updates and a merge, {name} batches"
        expect_stats(
            w, torch.cat(batches), given=given, dtype=torch.float64, rtol=1e-10, atol=1e-12
        )


def test_keeps_its_dtype(kata, device):
    """a float32 Welford stays float32 when given float64 batches: the state's dtype wins

    The state's dtype is chosen once, at construction: a batch in another dtype is cast to it,
    as an in-place add into a tensor keeps that tensor's dtype, and mean, M2 and var() stay in
    it instead of following the last batch.

    x in the state's dtype first, then the usual batch mean, M2 and merge.
    """
    batches = [data(n, 5, device, torch.float64) for n in (3, 1, 7, 2)]
    w = feed(welford(kata, 5, device, torch.float32), batches[:2])
    w.merge(feed(welford(kata, 5, device, torch.float32), batches[2:]))
    given = "Welford(5, dtype=float32) after updates and a merge, float64 batches"
    expect_stats(w, torch.cat(batches).float(), given=given, dtype=torch.float32)


def test_vectorized(kata, device):
    """vectorized over the features: no Python loop over them (a loop over rows is allowed)

    Every feature is independent: one tensor operation handles all of them at once.

    Reductions over dim 0 give (F,) tensors; δ, the mean and M2 are (F,) vectors.
    """
    cases = {f: (welford(kata, f, device), data(4, f, device)) for f in (2, 64)}

    def run(features):
        w, x = cases[features]
        w.update(x)
        other = welford(kata, features, device)
        other.update(x)
        w.merge(other)
        return w.var()

    expect_same_work(run, given="Welford(2) vs Welford(64): update, merge and var on 4 rows")


def test_constant_memory(kata, device):
    """its memory stays O(features) however many rows it sees: the rows are not kept

    A streaming statistic holds count, mean and M2 and nothing that grows with the data:
    keeping the batches (as tensors, lists of numbers, or inside objects of your own) to call
    torch.var_mean on them at the end is not Welford.

    State: count (an int), mean and M2 (F values each).
    """
    w = welford(kata, 3, device)
    held = []
    for _ in range(2):  # 200 rows, then 400
        feed(w, [data(20, 3, device) for _ in range(10)])
        held.append(values_held(w))
    (before, in_tensors, complete), (after, _, _) = held
    given = f"Welford(3) holds {before} values after 200 rows and {after} after 400"
    keep = "Keep only count (an int), and mean and M2 (3 values each): fold each batch into them."
    if not complete:
        fail(f"Welford(3)'s state reaches more than {WALK_LIMIT} objects after 200 rows. {keep}")
    if after - before >= 200 * 3:
        fail(
            f"{given}: the 200 more rows added at least the 600 values they hold, so it keeps "
            f"the rows, or as much data. {keep}"
        )
    if after > before:
        fail(f"{given}: its state grows with the data. {keep}")
    if in_tensors > 8 * 3:
        fail(
            f"Welford(3) holds {in_tensors} tensor elements after 200 rows, where count, mean "
            f"and M2 need 7 values. {keep}"
        )


def test_follows_device(kata, device):
    """runs on CUDA: update, merge and var create nothing on the CPU

    Every tensor of the state lives on the device Welford was made for, and every tensor made
    while updating on the batch's device; so does the variance of an accumulator that has seen
    no rows, NaN as it is.

    Pass device to torch.zeros in __init__; new tensors from operations on existing ones, the
    empty case's NaN included (M2 / 0 is one).
    """

    def run(x, y):
        a, b = welford(kata, 4, x.device), welford(kata, 4, x.device)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            empty = welford(kata, 4, x.device).var()
        a.update(x)
        b.update(y)
        a.merge(b)
        return a.mean, a.var(), a.var(correction=0), empty

    expect_function_follows_device(
        run, data(5, 4, "cpu"), data(3, 4, "cpu"), device=device, given="Welford(4)"
    )


@pytest.mark.broad
def test_matches_var_mean(kata, device):
    """any stream of updates and merges matches torch.var_mean of all the rows, float32 and float64

    Whatever the batch sizes (one row, none) and however the accumulators are merged (a chain,
    a tree, the other way round), the result is that of the concatenated rows.

    Chan's merge is exact in arithmetic: (count, mean, M2) of a union from those of its parts.
    """
    for dtype in (torch.float32, torch.float64):
        batches = [data(n, 6, device, dtype, centre=float(i % 3)) for i, n in enumerate(SIZES)]
        rows = torch.cat(batches)
        name = f"Welford(6, dtype={dtype_name(dtype)})"
        parts = [feed(welford(kata, 6, device, dtype), [x]) for x in batches]
        while len(parts) > 1:  # a tree: pairs first, then pairs of pairs
            merged = []
            for i in range(0, len(parts) - 1, 2):
                parts[i].merge(parts[i + 1])
                merged.append(parts[i])
            parts = merged + parts[len(merged) * 2 :]
        expect_stats(parts[0], rows, given=f"{name}: a tree of merges of 11 batches", dtype=dtype)
        chain = welford(kata, 6, device, dtype)
        for x in reversed(batches):  # merged into, in the other order
            single = feed(welford(kata, 6, device, dtype), [x])
            single.merge(chain)
            chain = single
        given = f"{name}: each batch's accumulator merging the rest"
        expect_stats(chain, rows, given=given, dtype=dtype)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_name)
def test_half_batches(kata, device, dtype):
    """float16 and bfloat16 batches are accumulated in the state's dtype (float32 by default)

    A half-precision batch mean near 384 is rounded to steps of 0.25 (float16) or 2
    (bfloat16): cast each batch to the state's dtype before any arithmetic, as torch's
    var_mean computes half inputs in float32.

    x in the state's dtype, then the usual batch mean, M2 and merge.
    """
    batches = [data(n, 8, device, dtype, centre=384.0, spread=1.0) for n in (5, 1, 9)]
    w = feed(welford(kata, 8, device), batches)
    # Against the accumulator itself fed the same values as float32 batches, not against torch:
    # a cast first makes the two runs one computation, so any other inaccuracy (E[x²] − E[x]²
    # near 384, say) is in both, and this fails for half-precision arithmetic alone.
    w32 = feed(welford(kata, 8, device), [b.float() for b in batches])
    given = (
        f"Welford(8) after three {dtype_name(dtype)} batches near 384, against the same values "
        "given as float32 batches"
    )
    if (have := count_of(w, given)) != (want := count_of(w32, given)):
        fail(f"{given}: count is {have}, expected {want} (the rows seen).")
    for what, read in (
        ("mean", lambda w: mean_of(w, given)),
        ("var()", lambda w: w.var()),
        ("var(correction=0)", lambda w: w.var(correction=0)),
    ):
        expect_close(read(w), read(w32), given=given, what=what, rtol=1e-5, atol=1e-6)


@pytest.mark.parity
def test_any_correction(kata, device):
    """var(correction=c) takes any c as torch.var: M2 / max(0, N − c), so inf or NaN past N

    torch.var accepts any non-negative correction, fractional too, and clamps the divisor at
    0: with c ≥ N the variance is inf (or NaN where M2 is 0), never negative.

    var(c) = M2 / max(0, N − c).
    """
    x = data(3, 4, device)
    w = feed(welford(kata, 4, device), [x])
    for c in (2, 0.5, 3, 5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = torch.var(x.double(), 0, correction=c).float()
            got = w.var(correction=c)
        given = "Welford(4) after update(x (3, 4))"
        expect_close(got, want, given=given, what=f"var(correction={c})")


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your update on a batch, and torch.var_mean of the same batch."""
    rows, d = (8192, 4096) if device.type == "cuda" else (2048, 1024)
    x = torch.randn(rows, d, device=device)
    w = welford(kata, d, device)
    return PerfCase(
        given=f"Welford({d}).update(x) on x ({rows}, {d}) float32",
        mine=lambda: (w.update(x), expect_tensor(w.var(), "var()"))[1],
        builtin=lambda: torch.var_mean(x, 0)[0],
        builtin_name="torch.var_mean",
        bytes_moved=x.nbytes,
    )


# -- the accumulator's members as the checks above read them, and the probes ------------------


def welford(kata, features, device, dtype=None):
    """The learner's Welford(features) on `device` (in `dtype`, else torch's default), with
    every member the checks read."""
    kwargs = {"device": device} if dtype is None else {"device": device, "dtype": dtype}
    w = kata.Welford(features, **kwargs)
    for name in MEMBERS:
        member(w, name, given=f"Welford({features})", read=False)
    return w


def member(w, name, *, given, read=True):
    """w.<name>, or a failure saying that w has no such attribute. A property is only run when
    `read`: an AttributeError from inside it is the learner's own and is left to say so."""
    found = inspect.getattr_static(w, name, MISSING)
    # Not defined (only __getattr__ may answer), or a __slots__ entry that may be unset.
    unsure = found is MISSING or isinstance(found, types.MemberDescriptorType)
    if unsure and not hasattr(w, name):
        fail(f"{given}: no attribute {name}. The contract reads {MEMBERS[name]} as w.{name}.")
    return getattr(w, name) if read else None


def feed(w, batches):
    """Update w with each batch in turn, each of which must be left as it was; returns w."""
    for x in batches:
        pristine = x.clone()
        w.update(x)
        expect_unchanged(x, pristine)
    return w


def expect_unchanged(x, pristine):
    """The caller's batch after update(x) must equal its copy from before: a batch written in
    place fails as test_update_leaves_its_input's mistake, before any value is compared with
    statistics of the changed rows."""
    if x.shape == pristine.shape and torch.equal(x, pristine):
        return
    call = f"update(x {shape_of(pristine)})"
    if x.shape != pristine.shape:
        fail_for(
            "test_update_leaves_its_input", f"{call} changed x in place to shape {shape_of(x)}."
        )
    at = tuple(int(i) for i in (x != pristine).nonzero()[0])
    fail_for(
        "test_update_leaves_its_input",
        f"{call} changed its input in place: x{list(at)} was {pristine[at].item():.6g}, is now "
        f"{x[at].item():.6g}. The batch is the caller's: compute on new tensors (x − mean is "
        "one), never in place on x; x.to(dtype) returns x itself when x already has that dtype.",
    )


def count_of(w, given):
    """w.count as an int: a Python int or an integer tensor of one element, never a float."""
    count = member(w, "count", given=given)
    try:
        return operator.index(count)
    except TypeError:
        pass
    if isinstance(count, float) or (isinstance(count, torch.Tensor) and count.is_floating_point()):
        fail(
            f"{given}: count is {count!r}, a float, expected an int. A count kept in floating "
            "point stops counting exactly (float32 at 2**24 rows, float64 at 2**53): keep a "
            "Python int, the sum of the batches' x.shape[0]."
        )
    if isinstance(count, torch.Tensor):
        fail(
            f"{given}: count is a {shape_of(count)} tensor, expected one int: every row has a "
            "value in every feature, so one count, the number of rows, serves them all."
        )
    fail(f"{given}: count is {count!r}, a {type(count).__name__}, expected an int: the rows seen.")


def mean_of(w, given):
    """w.mean, which must be a tensor: an attribute, or a property."""
    mean = member(w, "mean", given=given)
    if isinstance(mean, torch.Tensor):
        return mean
    if callable(mean):
        fail(f"{given}: mean is a method, expected the (F,) tensor itself, read as w.mean.")
    fail(f"{given}: mean is {mean!r}, a {type(mean).__name__}, expected a (F,) tensor.")


def expect_stats(w, rows, *, given, dtype=None, rtol=None, atol=None, var_rtol=None):
    """w's count, mean, var() and var(correction=0) must be those of `rows` (all rows seen):
    torch.var_mean in float64, rounded once to the state's dtype (`dtype`, else torch's
    default)."""
    dtype = dtype or torch.get_default_dtype()
    have = count_of(w, given)
    if have != rows.shape[0]:
        fail(f"{given}: count is {have}, expected {rows.shape[0]} (the rows seen).")
    rows64 = rows.double()
    for correction, call in ((1, "var()"), (0, "var(correction=0)")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns where count <= correction
            var, mean = torch.var_mean(rows64, 0, correction=correction)
            got = w.var() if correction == 1 else w.var(correction=0)
        expect_close(got, var.to(dtype), given=given, what=call, rtol=var_rtol or rtol, atol=atol)
    expect_close(mean_of(w, given), mean.to(dtype), given=given, what="mean", rtol=rtol, atol=atol)


def data(rows, features, device, dtype=torch.float32, centre=1.0, spread=2.0):
    """rows x features values of randn * spread + centre, in `dtype`."""
    x = torch.randn(rows, features, dtype=torch.float64) * spread + centre
    return x.to(device, dtype)


def expect_same_work(run, *, given):
    """run(64) must do no more work than run(2): the counts of expect_vectorized (tensor
    operations dispatched, Python lines run in the learner's code, each with its slack), in
    messages that name what grows here, the features, the rows being 4 in both."""
    ops = [count_ops(lambda f=f: run(f)) for f in (2, 64)]
    if ops[1] > ops[0] + 2:
        fail(
            f"{given}: your code ran {ops[0]} tensor operations with 2 features but {ops[1]} "
            "with 64, on the same number of rows: its work grows with the features (a loop "
            "over them?). Compute every feature at once: a reduction over dim 0 gives them all."
        )
    lines = [count_python_lines(lambda f=f: run(f)) for f in (2, 64)]
    if lines[1] > lines[0] + 4:
        fail(
            f"{given}: your code executed {lines[0]} Python lines with 2 features but "
            f"{lines[1]} with 64, on the same number of rows: a Python loop over the features "
            "(a list comprehension counts), even if it calls no tensor operation per feature. "
            "Compute every feature at once: a reduction over dim 0 gives them all."
        )


# How many objects values_held visits at most: a state of count, mean and M2 is a handful.
WALK_LIMIT = 100_000
# Not the accumulator's state, though reachable from it: code, classes, modules and names.
NOT_STATE = (type, types.ModuleType, types.CodeType, types.BuiltinFunctionType, str, torch.dtype)


def values_held(root):
    """(how many values root's state holds, how many of them in tensors, whether the walk saw
    all of it): every tensor's elements and every number reachable from root, through
    containers, attributes (__dict__, __slots__ of every class, dataclass fields), objects of
    any kind and closures, each object once; modules, classes and functions' globals are not
    state. A number counts at each place that holds it (600 zeros in a list are 600 values), a
    buffer (an array) by its items. Objects it shares with the rest of the program (a logger,
    say) count too, so only the tensors are held to a size; the whole may only not grow."""
    seen, total, in_tensors, todo = set(), 0, 0, [root]
    while todo:
        obj = todo.pop()
        if isinstance(obj, (bool, int, float, complex)):
            total += 1
            continue
        if id(obj) in seen or isinstance(obj, NOT_STATE):
            continue
        if len(seen) >= WALK_LIMIT:
            return total, in_tensors, False
        seen.add(id(obj))
        if isinstance(obj, torch.Tensor):
            total += obj.numel()
            in_tensors += obj.numel()
        elif isinstance(obj, types.FunctionType):
            todo += obj.__closure__ or ()  # its cells, never its module's globals
        elif (items := buffer_items(obj)) is not None:
            total += items
        else:
            todo += gc.get_referents(obj)  # items, keys and values, attributes, slots, a cell's
    return total, in_tensors, True


def buffer_items(obj):
    """How many items obj holds in a buffer of its own (bytes, array.array, a NumPy array), or
    None for an object without one."""
    try:
        view = memoryview(obj)
    except TypeError:
        return None
    return view.nbytes // max(view.itemsize, 1)
