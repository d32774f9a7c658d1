"""Hidden checks for the Welford kata, against torch.var_mean over every row seen.

Each check judges its own property only. Those of what one update computes (one_batch, the
NaN of one row and of none, the broad matches_var_mean) compare with torch.var_mean of the
concatenated rows, computed in float64 and rounded once to the state's dtype. The others
compare the learner's accumulator with the learner's own given the same rows another way, so
that what they do not judge is the same on both sides and a mistake there does not fail them:
a stream of batches against one update with all its rows, batches of one row or empty batches
against the same rows without them, float32 against float64, a merge against Chan's formula
on the two sides as the learner's code left them, and b after a.merge(b), or a after b goes
on, against the same accumulator left alone. Every variance a check judges is read on an
accumulator of its own, with the correction given (stats_of): what a second read gives is
reading_changes_nothing's, and what var() defaults to is correction's. Every batch reaches
update as a copy, but in update_leaves_its_input. Where a check can only meet another's
mistake, it says so (fail_for): reading that changes the state, met between steps; a batch
of one row whose M2 is NaN, met in one row's var(correction=0); a count that is not an int.

Interview core first, then torch parity (@pytest.mark.parity): half-precision batches and any
correction, as torch.var takes it.

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
    expect_float64_arithmetic,
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
        "count": lambda: torch.tensor(count_value(w, given)),
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
    given = "Welford(3) after update(x (4, 3))"

    def read(call, **correction):
        # Each on an accumulator of its own: reading twice is test_reading_changes_nothing's.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return expect_tensor(feed(welford(kata, 3, device), [x]).var(**correction), call)

    # Each against the learner's own var(correction=1), so that only the divisor is judged
    # here: M2 is the other checks'.
    unbiased = read("var(correction=1)", correction=1)
    expect_multiple(
        read("var()"), unbiased, 1, "your var(correction=1) there, {base}: the default "
        "correction is 1", x, 1, given=given, what="var()",
    )  # fmt: skip
    # N from the learner's own count (4 rows, unless it counts otherwise: test_one_batch's).
    n = learners_count(feed(welford(kata, 3, device), [x]), default=4)
    expect_multiple(
        read("var(correction=0)", correction=0), unbiased, (n - 1) / n, f"{n - 1} / {n} of "
        f"your var(correction=1) there, M2 / {n} where it is M2 / {n - 1}: {{base}} · "
        f"{n - 1} / {n} = {{want}}", x, 0, given=given, what="var(correction=0)",
    )  # fmt: skip


def test_one_batch(kata, device):
    """after one update, count, mean and var(correction) are those of the batch, as torch.var_mean

    One batch of B rows: the count is B and the mean and variance are per feature, over
    dim 0.

    mean = Σ x / B and M2 = Σ (x − mean)² over the rows; var(correction) = M2 / (B − correction).
    """
    x = data(6, 5, device)
    expect_stats(
        lambda: feed(welford(kata, 5, device), [x]), x, given="Welford(5) after update(x (6, 5))"
    )


def test_update_leaves_its_input(kata, device):
    """update leaves the caller's batch as it was, in any dtype

    The batch belongs to the caller, who may log it, train on it or hand it to another
    accumulator: changing it in place (centring it, say) overwrites their data. A cast to the
    dtype the batch already has makes no copy: it is the caller's tensor itself.

    The batch's deviations x − mean_b are a new tensor; work in place only on tensors the update
    made itself.
    """
    for dtype in (torch.float32, torch.float64):
        batches = [data(n, 4, device, dtype) for n in (5, 1, 3)]
        feed_checking(welford(kata, 4, device, dtype), batches)


def test_stream_of_batches(kata, device):
    """updates with batches of different sizes give what one update with all their rows gives

    The running mean is over rows, not over batches: a batch of 9 rows counts 9 times as
    much as a batch of 1, and the variance includes the spread between the batches' means.

    With n = n_a + n_b and δ = mean_b − mean_a: mean = mean_a + δ · n_b / n and
    M2 = M2_a + M2_b + δ² · n_a · n_b / n.
    """
    batches = [data(n, 4, device, centre=c) for n, c in ((3, -2.0), (9, 1.0), (2, 4.0), (5, 0.0))]
    given = (
        "Welford(4) after updates of (3, 4), (9, 4), (2, 4), (5, 4) batches, against your "
        "Welford(4) after one update with their 19 rows"
    )
    expect_same_stats(
        lambda: feed(welford(kata, 4, device), batches),
        lambda: feed(welford(kata, 4, device), [torch.cat(batches)]),
        given=given,
    )


def test_batch_of_one(kata, device):
    """a batch of one row updates the statistics: its own M2 (spread) is 0, not NaN

    A single row has a mean (itself) and a sum of squared deviations (0); only its unbiased
    variance, 0 / 0, is undefined. Merge its count, mean and M2.

    For B = 1: mean_b = x, M2_b = 0; then the usual merge with n_b = 1.
    """
    # Batches of one row each, on an empty accumulator and on one of 1, 2 and 3 rows; against
    # the same rows in one batch, so that only the batches of one are judged here (batches of
    # one size weigh alike whether the mean is taken over rows or over batches).
    rows = data(4, 4, device)
    given = (
        "Welford(4) after four updates of one row each, (1, 4) batches, against your Welford(4) "
        "after one update with the 4 rows"
    )
    expect_same_stats(
        lambda: feed(welford(kata, 4, device), list(rows.split(1))),
        lambda: feed(welford(kata, 4, device), [rows]),
        given=given,
    )


def test_empty_batch(kata, device):
    """an empty batch (0 rows) changes nothing: no NaN from its 0 / 0 mean

    A batch with no rows has no mean: adding it must leave count, mean and M2 as they were,
    first in the stream or later.

    With n_b = 0 there is nothing to merge: return before dividing by n_b.
    """
    empty = torch.empty(0, 4, device=device)
    x, y = data(5, 4, device), data(3, 4, device)
    given = (
        "Welford(4) after updates of (0, 4), (5, 4), (0, 4), (3, 4) batches, against your "
        "Welford(4) after the (5, 4) and (3, 4) batches alone"
    )
    expect_same_stats(
        lambda: feed(welford(kata, 4, device), [empty, x, empty, y]),
        lambda: feed(welford(kata, 4, device), [x, y]),
        given=given,
    )


def test_merge_spread_of_means(kata, device):
    """merge adds the spread between the two means: Chan's δ² · n_a · n_b / n term

    Two halves with different means: the variance of the whole is the spread within each half
    plus the spread of the halves' means around the merged mean. Use the counts before the
    merge, and δ before the mean moves.

    M2 = M2_a + M2_b + δ² · n_a · n_b / n, with δ = mean_b − mean_a and n = n_a + n_b.
    """
    # Equal counts: however the means are weighted, only the spread term can be missing. The
    # variance only, against Chan's formula on the two sides as the learner's code left them.
    x, y = data(4, 4, device, centre=-2.0), data(4, 4, device, centre=3.0)
    expect_merge(
        kata, device, x, y, given="a (4 rows).merge(b (4 rows)), Welford(4)", judge=("var",)
    )


def test_merge_weights_by_counts(kata, device):
    """merge weights each side's mean by its count, not the two sides equally

    Merging an accumulator of 1 row into one of 7 gives the mean of the 8 rows: the
    7-row side counts 7 times as much as the other.

    mean = mean_a + (mean_b − mean_a) · n_b / (n_a + n_b).
    """
    # The count and the mean only, against the two sides' as the learner's code left them.
    x, y = data(7, 4, device, centre=-1.0), data(1, 4, device, centre=5.0)
    given = "a (7 rows).merge(b (1 row)), Welford(4)"
    expect_merge(kata, device, x, y, given=given, judge=("count", "mean"))


def test_merge_with_empty(kata, device):
    """merging with an empty accumulator, either way round, changes nothing

    An accumulator that has seen no rows adds nothing, and one that has seen none takes the
    other's statistics; two empty ones stay empty and usable, with no 0 / 0.

    With n_b = 0, return as it is; with n_a = 0 the formulas give the other's (count, mean,
    M2); with n = 0, divide by nothing.
    """
    x = data(5, 4, device)

    def alone():
        return feed(welford(kata, 4, device), [x])

    def empty_into_a():
        a = alone()
        a.merge(welford(kata, 4, device))
        return a

    def b_into_empty():
        a = welford(kata, 4, device)
        a.merge(alone())
        return a

    def two_empty_then_x():
        a = welford(kata, 4, device)
        a.merge(welford(kata, 4, device))
        return feed(a, [x])

    for build, given in (
        (empty_into_a, "a (5 rows).merge(Welford(4)), an empty one, against your a (5 rows)"),
        (b_into_empty, "Welford(4), an empty one, .merge(b (5 rows)), against your b (5 rows)"),
        (
            two_empty_then_x,
            "two empty Welford(4) merged, then update(x (5, 4)), against your Welford(4) after "
            "update(x (5, 4)) alone",
        ),
    ):
        expect_same_stats(build, alone, given=given)


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

            def merged_into_a(first=first, then=then):
                b = feed(welford(kata, 3, device), [y])
                a = feed(welford(kata, 3, device), [] if first is None else [first])
                a.merge(b)
                if then == "a.update(z)":
                    feed(a, [z])
                else:
                    a.merge(feed(welford(kata, 3, device), [z]))
                a.merge(feed(welford(kata, 3, device), [x]))
                return b

            side = "an empty a" if first is None else "a (4 rows)"
            given = f"b (6 rows) after {side}.merge(b), {then}, a.merge(d), against your b unmerged"
            expect_same_stats(
                merged_into_a, lambda: feed(welford(kata, 3, device), [y]), given=given
            )


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

            def merged(first=first, then=None):
                a = feed(welford(kata, 3, device), [] if first is None else [first])
                b = feed(welford(kata, 3, device), [y])
                a.merge(b)
                if then == "b.update(z)":
                    feed(b, [z])
                elif then is not None:
                    b.merge(feed(welford(kata, 3, device), [z]))
                if then is not None:
                    b.merge(feed(welford(kata, 3, device), [x]))
                return a

            side = "an empty a" if first is None else "a (4 rows)"
            given = (
                f"{side}.merge(b (6 rows)), then {then} and b.merge(d), against your "
                f"{side}.merge(b (6 rows)) with b left alone"
            )
            expect_same_stats(lambda m=merged, t=then: m(then=t), merged, given=given)


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
    steps = (("update(x (5, 4))", x), ("update(y (3, 4))", y), ("merge(b (4 rows))", z))
    steps += (("update(v (2, 4))", v),)

    def take(w, step):
        name, batch = step
        if name.startswith("merge"):
            w.merge(feed(welford(kata, 4, device), [batch]))
        else:
            feed(w, [batch])

    def unread(k):
        """The learner's Welford(4) after the first k steps, read for the first time now."""
        w = welford(kata, 4, device)
        for step in steps[:k]:
            take(w, step)
        return w

    # Against the learner's own accumulator given the same steps and read only at the end: so
    # that what the steps compute is not judged here, only what reading between them does.
    w = unread(1)
    for k in range(2, len(steps) + 1):
        before = f"Welford(4) after {', '.join(name for name, _ in steps[: k - 1])}"
        read = {
            "mean": mean_of(w, before).clone(),
            "var()": expect_tensor(w.var(), "var()").clone(),
        }
        take(w, steps[k - 1])
        given = f"{before}, {steps[k - 1][0]}, read after each"
        twin = unread(k)
        got = {"count": count_value(w, given), "mean": mean_of(w, given), "var()": w.var()}
        want = {"count": count_value(twin, given), "mean": mean_of(twin, given)}
        want["var()"] = twin.var()
        if got["count"] != want["count"]:
            fail(
                f"{given}: count is {got['count']}, where your Welford(4) given the same steps "
                f"and read only now counts {want['count']}: reading changed the count."
            )
        for what in ("mean", "var()"):
            now = expect_tensor(got[what], what)
            if now.shape == want[what].shape and torch.allclose(
                now.double(), want[what].double(), rtol=1e-5, atol=1e-5, equal_nan=True
            ):
                continue
            if torch.equal(now, read[what]):
                fail(
                    f"{given}: {what} is still the value read before {steps[k - 1][0]}. Is it "
                    "computed once, on the first read, and kept?"
                )
            expect_reading_changes_nothing(lambda k=k: unread(k), given=given)
            expect_close(
                now,
                want[what],
                given=f"{given}, against your Welford(4) given the same steps and read only now",
                what=what,
            )


def test_one_sample_unbiased(kata, device):
    """var(correction=1) of one row is NaN, as torch.var's (0 / 0); var(correction=0) is 0

    With N = 1 the unbiased variance divides 0 by N − 1 = 0: torch answers NaN (with a
    warning), neither an error nor 0.

    var(correction) = M2 / max(0, N − correction) as a tensor division: 0 / 0 gives NaN.
    """
    x = data(1, 3, device)
    given = "Welford(3) after update(x (1, 3))"

    def one_row():
        return feed(welford(kata, 3, device), [x])

    biased = stats_of(one_row, given, judge=("var",))["var(correction=0)"]
    if biased.isnan().any():
        # M2 of the one row is NaN rather than 0 when a row added to two others makes NaN too:
        # a batch of one's M2, test_batch_of_one's to tell.
        more = feed(welford(kata, 3, device), [data(2, 3, device), x])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            after = expect_tensor(more.var(correction=0), "var(correction=0)")
        if after.isnan().any():
            fail_for(
                "test_batch_of_one",
                f"{given}: var(correction=0) is NaN, not 0, and a batch of one row after a "
                "batch of 2 rows makes var(correction=0) NaN too: the M2 of a batch of one "
                "row is NaN, where it is 0.",
            )
    expect_stats(one_row, x, given=given, judge=("var",))


def test_var_of_no_rows(kata, device):
    """var() of an empty accumulator (0 rows seen) is NaN for every correction, as torch.var's

    With N = 0 every variance is 0 / 0: torch.var of no rows answers NaN (with a warning),
    neither 0 nor an error. A new accumulator, one given an empty batch and two empty ones
    merged have all seen no rows.

    var(correction) = M2 / max(0, N − correction) as a tensor division: 0 / 0 gives NaN.
    """
    for dtype in (torch.float32, torch.float64):
        name = f"Welford(4, dtype={dtype_name(dtype)})"

        def new(dtype=dtype):
            return welford(kata, 4, device, dtype)

        def given_an_empty_batch(dtype=dtype):
            return feed(new(), [torch.empty(0, 4, device=device, dtype=dtype)])

        def two_merged(dtype=dtype):
            empty = new()
            empty.merge(new())
            return empty

        ways = {
            f"{name}, new": new,
            f"{name} after update(x (0, 4))": given_an_empty_batch,
            f"two empty {name} merged": two_merged,
        }
        nan = torch.full((4,), float("nan"), device=device, dtype=dtype)
        for given, build in ways.items():
            try:
                build()
            except NotImplementedError:
                raise
            except Exception:
                # An empty batch or merge that raises is test_empty_batch's and
                # test_merge_with_empty's to tell: there is no accumulator here to read.
                continue
            for call, correction in (("var()", None), ("var(correction=0)", 0)):
                w = build()  # each read on an accumulator of its own
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        got = w.var() if correction is None else w.var(correction=0)
                except NotImplementedError:
                    raise
                except Exception as e:
                    fail(
                        f"{given}: {call} raised {type(e).__name__}: {e}. With no rows it is NaN "
                        "(0 / 0), as torch.var's: a warning is allowed, an exception is not."
                    )
                expect_close(got, nan, given=given, what=call)


def test_large_mean_float32(kata, device):
    """float32 stays as accurate as float64 when the mean is large (1e4): no E[x²] − E[x]² shortcut

    Around 1e4 the squares are 1e8, where float32's steps are 8 wide: Σ x² / N − mean² loses
    every digit of a variance of 1. Center on a mean before squaring: each batch on its own,
    or each row on the running mean.

    M2_b = Σ (x − mean_b)², merged with Chan's formula; or, row by row, δ = x − mean,
    mean += δ / n, M2 += δ · (x − mean).
    """
    # Against the learner's own accumulator in float64, given the same values: the formula is
    # the other checks' to judge, the digits that float32 loses with it are this one's.
    batches = [data(n, 16, device, centre=1e4, spread=1.0) for n in SIZES]
    sizes = ", ".join(map(str, SIZES))

    def stream(dtype):
        return feed(welford(kata, 16, device, dtype), [b.to(dtype) for b in batches])

    def merged(dtype):
        a = feed(welford(kata, 16, device, dtype), [b.to(dtype) for b in batches[:5]])
        a.merge(feed(welford(kata, 16, device, dtype), [b.to(dtype) for b in batches[5:]]))
        return a

    twin = "your Welford(16, dtype=float64) given the same values"
    for run, given in (
        (
            stream,
            f"Welford(16) after updates of {len(SIZES)} batches of 1e4 + randn ({sizes} rows)",
        ),
        (merged, "a.merge(b), Welford(16), on 1e4 + randn, 5 batches and 6 batches"),
    ):
        expect_same_stats(
            lambda run=run: run(torch.float32), lambda run=run: run(torch.float64),
            given=f"{given}, float32, against {twin}", dtype=torch.float32, var_rtol=1e-2,
        )  # fmt: skip


def test_computes_in_float64(kata, device):
    """a float64 Welford computes in float64, float32 batches too: nothing is rounded to float32

    Every tensor the state holds and every ratio of counts must stay in float64: a count or a
    batch statistic rounded to float32 shows at the 8th digit. A float32 batch is cast up to
    the state's dtype before its mean is taken, not after.

    Keep count an int (n_b / n is then a double), and cast each batch to the state's dtype,
    float64, before any arithmetic.
    """
    sizes = (3, 2, 7, 2)
    name = "Welford(5, dtype=float64) after updates and a merge"

    def run(batches):
        w = feed(welford(kata, 5, device, torch.float64), batches[:2])
        w.merge(feed(welford(kata, 5, device, torch.float64), batches[2:]))
        return w

    # Whatever the formula, a float64 computation answers a change of the rows by one part in
    # 1e9, where anything rounded to float32 cannot see it.
    rows = data(sum(sizes), 5, device, torch.float64, centre=0.0, spread=1.0)
    given = f"{name}, float64 batches"

    def read(v):
        w = run(list(v.split(sizes)))
        return torch.cat([mean_of(w, given), expect_tensor(w.var(correction=1), "var()")])

    expect_float64_arithmetic(read, rows, given=given)
    # A float32 batch holds the same values as its float64 copy: the same statistics.
    batches = [data(n, 5, device, torch.float32, centre=0.0, spread=1.0) for n in sizes]
    expect_same_stats(
        lambda: run(batches), lambda: run([b.double() for b in batches]),
        given=f"{name}, float32 batches, against your {name} given them as float64 batches",
        rtol=1e-12, atol=1e-14,
    )  # fmt: skip
    # A count, or a ratio of counts, rounded to float32: right to float32's 7 digits only. Off
    # by more than any rounding, it is a mistake in the formula, the other checks' to tell.
    given = f"{name}, float64 batches, against torch.var_mean of the rows in float64"
    stats = stats_of(lambda: run(list(rows.split(sizes))), given)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        var, mean = torch.var_mean(rows, 0, correction=1)
    want = {"mean": mean, "var(correction=1)": var}
    want["var(correction=0)"] = torch.var(rows, 0, correction=0)
    off = max(rounding_error(stats[what], want[what]) for what in want)
    if off <= 1e-4:
        expect_stats(lambda: run(list(rows.split(sizes))), rows, given=given, dtype=torch.float64,
                     rtol=1e-10, atol=1e-12)  # fmt: skip


def test_keeps_its_dtype(kata, device):
    """a float32 Welford stays float32 when given float64 batches: the state's dtype wins

    The state's dtype is chosen once, at construction: a batch in another dtype is cast to it,
    as an in-place add into a tensor keeps that tensor's dtype, and mean, M2 and var() stay in
    it instead of following the last batch.

    x in the state's dtype first, then the usual batch mean, M2 and merge.
    """
    batches = [data(n, 5, device, torch.float64) for n in (3, 1, 7, 2)]

    def run(batches):
        w = feed(welford(kata, 5, device, torch.float32), batches[:2])
        w.merge(feed(welford(kata, 5, device, torch.float32), batches[2:]))
        return w

    name = "Welford(5, dtype=float32) after updates and a merge"
    given = f"{name}, float64 batches, against your {name} given them as float32 batches"
    expect_same_stats(lambda: run(batches), lambda: run([b.float() for b in batches]), given=given)


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
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            welford(kata, 4, "cpu").var()
        empty_reads = True
    except NotImplementedError:
        raise
    except Exception:
        empty_reads = False  # raising with no rows, on any device, is test_var_of_no_rows's

    def run(x, y):
        a, b = welford(kata, 4, x.device), welford(kata, 4, x.device)
        empty = None
        if empty_reads:
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
        expect_stats(
            lambda w=parts[0]: w, rows, given=f"{name}: a tree of merges of 11 batches", dtype=dtype
        )
        chain = welford(kata, 6, device, dtype)
        for x in reversed(batches):  # merged into, in the other order
            single = feed(welford(kata, 6, device, dtype), [x])
            single.merge(chain)
            chain = single
        given = f"{name}: each batch's accumulator merging the rest"
        expect_stats(lambda w=chain: w, rows, given=given, dtype=dtype)


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
    if (have := count_value(w, given)) != (want := count_value(w32, given)):
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
    for c in (2, 0.5, 3, 5):
        w = feed(welford(kata, 4, device), [x])  # each read on an accumulator of its own
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
    """Update w with a copy of each batch in turn; returns w. The checks of the statistics judge
    what update computes, whether or not it writes into its input: that is
    test_update_leaves_its_input's, which hands update the caller's own tensors
    (feed_checking)."""
    for x in batches:
        w.update(x.clone())
    return w


def feed_checking(w, batches):
    """Update w with each batch in turn, each of which must be left as it was; returns w."""
    for x in batches:
        pristine = x.clone()
        w.update(x)
        expect_unchanged(x, pristine)
    return w


def expect_unchanged(x, pristine):
    """The caller's batch after update(x) must equal its copy from before."""
    if x.shape == pristine.shape and torch.equal(x, pristine):
        return
    call = f"update(x {shape_of(pristine)})"
    if x.shape != pristine.shape:
        fail(f"{call} changed x in place to shape {shape_of(x)}.")
    at = tuple(int(i) for i in (x != pristine).nonzero()[0])
    fail(
        f"{call} changed its input in place: x{list(at)} was {pristine[at].item():.6g}, is now "
        f"{x[at].item():.6g}. The batch is the caller's: compute on new tensors (x − mean is "
        "one), never in place on x; x.to(dtype) returns x itself when x already has that dtype."
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


def learners_count(w, *, default):
    """w.count where it is a number above 1, else default: the divisors the learner's own count
    gives, for a check that is not about the count."""
    try:
        count = count_value(w, "")
    except pytest.fail.Exception:
        return default
    return count if isinstance(count, int | float) and count > 1 else default


def mean_of(w, given):
    """w.mean, which must be a tensor: an attribute, or a property."""
    mean = member(w, "mean", given=given)
    if isinstance(mean, torch.Tensor):
        return mean
    if callable(mean):
        fail(f"{given}: mean is a method, expected the (F,) tensor itself, read as w.mean.")
    fail(f"{given}: mean is {mean!r}, a {type(mean).__name__}, expected a (F,) tensor.")


def count_value(w, given):
    """w.count as a number, for the checks of how many rows were seen. A count that is not an
    int (count_of) is test_starts_empty's mistake where a new Welford's count is already so:
    its value is read then, if it has one (a float, a one-element tensor), else that check is
    named; a count that turns into something else in update or merge is test_one_batch's."""
    count = member(w, "count", given=given)
    try:
        return count_of(w, given)
    except pytest.fail.Exception as e:
        message = str(e.msg)
    born = member(type(w)(1), "count", given=f"{type(w).__name__}(1)")
    like = type(born) is type(count) and (
        not isinstance(count, torch.Tensor)
        or (born.shape, born.dtype) == (count.shape, count.dtype)
    )
    if not like:
        fail_for("test_one_batch", message)
    if isinstance(count, float) or (isinstance(count, torch.Tensor) and count.numel() == 1):
        return count.item() if isinstance(count, torch.Tensor) else count
    fail_for("test_starts_empty", message)


# The variances the checks read, and their corrections.
VARIANCES = {"var(correction=1)": 1, "var(correction=0)": 0}


def stats_of(build, given, judge=("count", "mean", "var")):
    """The statistics of the accumulator build() makes, as {name: value}, those of `judge`:
    count (a number), mean, var(correction=1) and var(correction=0). Each variance is read on an
    accumulator of its own, the first read there: what a second read gives is
    test_reading_changes_nothing's to tell."""
    stats = {}
    if "count" in judge or "mean" in judge:
        w = build()
        if "count" in judge:
            stats["count"] = count_value(w, given)
        if "mean" in judge:
            stats["mean"] = mean_of(w, given)
    if "var" in judge:
        for call, correction in VARIANCES.items():
            w = build()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch warns where count <= correction
                stats[call] = expect_tensor(w.var(correction=correction), call)
    return stats


def expect_stats(
    build, rows, *, given, dtype=None, rtol=None, atol=None, var_rtol=None,
    judge=("count", "mean", "var"),
):  # fmt: skip
    """The statistics of build()'s accumulator that the check judges (count, mean, var) must be
    those of `rows` (all rows seen): torch.var_mean in float64, rounded once to the state's
    dtype (`dtype`, else torch's default). Each variance is read on an accumulator of its own
    (stats_of)."""
    dtype = dtype or torch.get_default_dtype()
    have = stats_of(build, given, judge)
    if "count" in have and have["count"] != rows.shape[0]:
        fail(f"{given}: count is {have['count']}, expected {rows.shape[0]} (the rows seen).")
    rows64 = rows.double()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns where count <= correction
        want = {call: torch.var(rows64, 0, correction=c) for call, c in VARIANCES.items()}
        want["mean"] = torch.var_mean(rows64, 0)[1]
    for call in (*VARIANCES, "mean"):
        if call in have:
            tol = var_rtol or rtol if call in VARIANCES else rtol
            expect_close(
                have[call], want[call].to(dtype), given=given, what=call, rtol=tol, atol=atol
            )


def expect_same_stats(build, twin, *, given, dtype=None, rtol=None, atol=None, var_rtol=None):
    """build()'s count, mean and variances must be those of twin(), the learner's own
    accumulator given the same rows another way (in one batch, without the empty ones, in
    float64, ...): a check that compares the two judges only what tells them apart. Both are
    read alike (stats_of); twin's values are rounded to `dtype` where given."""
    have, want = stats_of(build, given), stats_of(twin, given)
    if have["count"] != want["count"]:
        fail(f"{given}: count is {have['count']}, expected {want['count']}.")
    for call in (*VARIANCES, "mean"):
        expected = want[call] if dtype is None else want[call].to(dtype)
        tol = var_rtol or rtol if call in VARIANCES else rtol
        expect_close(have[call], expected, given=given, what=call, rtol=tol, atol=atol)


def expect_merge(kata, device, x, y, *, given, judge):
    """a.merge(b), a fed x and b fed y, must give what Chan's formula gives from the two sides as
    the learner's code left them (count, mean, M2 = var() · (count − 1), each side read on an
    accumulator of its own): so that only the merge is judged, not the updates, nor how var
    divides M2 for another correction (test_correction's). `judge`: which of count, mean and
    var the check is named for; the variance is var(), the default correction."""
    sides = []
    for rows in (x, y):
        side = feed(welford(kata, 4, device), [rows])
        n, mean = count_value(side, given), mean_of(side, given).double()
        m2 = torch.zeros_like(mean)  # read only where the variance is judged
        if "var" in judge:
            side = feed(welford(kata, 4, device), [rows])  # read for the first time
            m2 = expect_tensor(side.var(correction=1), "var(correction=1)").double() * (n - 1)
        sides.append((n, mean, m2))
    (n_a, mean_a, m2_a), (n_b, mean_b, m2_b) = sides
    n = n_a + n_b
    delta = mean_b - mean_a
    chan = {"mean": mean_a + delta * (n_b / n)}
    m2 = m2_a + m2_b + delta.square() * (n_a * n_b / n)
    for call, correction in VARIANCES.items():
        chan[call] = m2 / max(0, n - correction)

    def merged():
        a, b = feed(welford(kata, 4, device), [x]), feed(welford(kata, 4, device), [y])
        a.merge(b)
        return a

    have = stats_of(merged, given, judge)
    given = (
        f"{given}, against Chan's merge of your a and b as they were (count, mean, and "
        "M2 = var(correction=1) · (count − 1) of each)"
    )
    if "count" in have and have["count"] != n:
        fail(f"{given}: count is {have['count']}, expected {n}, n_a + n_b.")
    dtype = torch.get_default_dtype()
    for call in ("var(correction=1)", "mean"):
        if call in have:
            expect_close(have[call], chan[call].to(dtype), given=given, what=call)


def expect_multiple(got, base, factor, said, x, correction, *, given, what):
    """got must be `factor` times base, the learner's own var(correction=1): messages say how
    the number called expected is made from theirs (`said`, where {base} and {want} stand for
    the two numbers), and what torch.var of the batch x gives with that correction."""
    got = expect_tensor(got, what)
    if got.shape != base.shape:
        fail(f"{given}: {what} has shape {shape_of(got)}, expected {shape_of(base)}.")
    g, b = got.detach().double().cpu(), base.detach().double().cpu()
    want = b * factor
    bad = ~torch.isclose(g, want, rtol=1e-5, atol=1e-5, equal_nan=True)
    if bad.any():
        i = int(bad.nonzero()[0])
        torch_var = torch.var(x.double().cpu(), 0, correction=correction)[i].item()
        expected = said.format(base=f"{b[i].item():.6g}", want=f"{want[i].item():.6g}")
        fail(
            f"{given}: {what} is {g[i].item():.6g} for feature {i}, expected {expected} "
            f"(torch.var of the batch with correction={correction} gives {torch_var:.6g})."
        )


def expect_reading_changes_nothing(build, *, given):
    """fail_for test_reading_changes_nothing where reading var() twice from build()'s
    accumulator gives two values: a value read between steps then differs for that mistake."""
    w = build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = expect_tensor(w.var(), "var()").clone()
        again = expect_tensor(w.var(), "var()")
    if not (first.shape == again.shape and torch.allclose(first, again, equal_nan=True)):
        fail_for(
            "test_reading_changes_nothing",
            f"{given}: what was read differs from an accumulator read only at the end, and "
            f"var() read twice in a row gives [{', '.join(f'{v:.6g}' for v in first.tolist())}] "
            f"then [{', '.join(f'{v:.6g}' for v in again.tolist())}]: reading changes the "
            "state, so every read between the steps changes what they compute.",
        )


def rounding_error(got, want):
    """The largest |got − want| / (|want| + 1) of two tensors, as float64: rounding to float32
    makes it about 1e-8 for values of unit size, a wrong formula far more (inf for a shape that
    differs, NaN counted as inf)."""
    got = got.detach().double().cpu() if isinstance(got, torch.Tensor) else None
    if got is None or got.shape != want.shape:
        return float("inf")
    want = want.detach().double().cpu()
    return ((got - want).abs() / (want.abs() + 1)).nan_to_num(nan=float("inf")).max().item()


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
