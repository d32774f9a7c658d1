"""Hidden checks for the fused residual add + RMSNorm kata: the learner's Triton kernel, run.

The contract is vLLM's fused_add_rms_norm (and FlashInfer's fused_add_rmsnorm) with y returned
rather than written over x: `fused_add_rms_norm(x, residual, weight, eps)` updates residual in
place with x + residual, rounded to x's dtype, and returns (y, residual), y = RMSNorm of that
rounded residual times weight, in a new tensor of x's dtype; x itself is left as it was.

What is checked, in which modes (float32 unless said; parity is the stretch tier):

    property                              float32   float16   bfloat16   shapes
    launches the kernel, no torch work    yes       -         yes        every call, watched
    every access inside its tensor        yes       yes       yes        every call, watched
    no two programs race on an element    yes       yes       yes        every call, interpreted;
                                                                         (2, 16384)
    returns (y, residual), in that order  yes       -         -          (8, 64), (2, 3, 64)
    residual = x + residual               yes       -         -          N = 64, 100
    residual in place, x untouched        -         yes       -          (4, 64)
    y = rms_norm(residual) · weight, eps  yes       -         -          (8, 64)
    widths past a power of two, wide rows yes       -         -          N = 77, 100, 1000, 10000
    leading dims, any number of rows      yes       -         -          (B, T, N): 37, 267 rows
    strided rows of x, y contiguous       yes       -         -          buffer[:, :N]
    float32 accumulation (|x| ~ 300)      -         yes       -          (8, 64)
    y and residual in x's dtype, values   -         yes       yes        (8, 100)
    norm of the residual rounded first    -         yes       -          (8, 64), within 0.6 ulp
    a single vector (N,)   [parity]       yes       -         -          (64,)

Where the kernel runs, how the engine is proven, and how every call is overseen: as for the
Triton RMSNorm kata (see tests/test_triton_rmsnorm.py and norm_katas/checks/triton_engine/).
Here both x and the residual are activations: torch work on either outside the kernel fails,
and the residual's storage is fenced (NaN after it) like x's, so that a store past its end is
seen compiled too. As for the Triton LayerNorm kata (tests/test_triton_layernorm.py), every
element two programs of one launch share without an atomic or a lock is reported as a race
(interpreted only): a row split across programs whose partial sums of squares meet in one
buffer by a plain load and store, say. bfloat16 checks are skipped with a note where Triton's
interpreter computes an operation the kernel ran wrongly (it does bfloat16 + bfloat16 on the raw
bits).

Where the expected values come from: the sum x + residual in float64 rounded to x's dtype (the
residual), then F.rms_norm of it for float32, the formula in float64 for half dtypes.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from norm_katas.checks import (
    PerfCase,
    Suite,
    dtype_name,
    fail,
    fail_for,
    shape_of,
    triton_engine,
)
from norm_katas.checks.triton_engine import HALF, Call, Oversight

# Interpreted, the checks take half a second of CPU time: two processes share them
# (engine.shards).
SUITE = Suite(
    shards=2,
    no_device_note=triton_engine.no_device_note("the bandwidth report (--perf)"),
    device_note=triton_engine.weight_unseen("x, the residual and y"),
)
engine = triton_engine.engine  # autouse: Triton set up and proven before the learner's file


# -- the checks -------------------------------------------------------------------------------


@triton_engine.first_check  # a minute, not 10 s: it sets the engine up too
def test_kernel_does_the_work(kata, device):
    """your Triton kernel does the work: fused_add_rms_norm launches it, and torch computes nothing

    The point of fusing is one pass: read x and the residual once, write the residual and y
    once. A torch add before the kernel (or any cast, copy or fallback) is another full pass
    through memory. Every check's call is watched for it; this one is named for it.

    Outside the kernel only allocation and views: an empty y, x viewed as rows of N, y viewed
    back in x's shape. Load both, add, store the sum, square, sum, rsqrt, scale and cast between
    tl.load and tl.store.
    """
    for shape, dtype in (((8, 64), torch.float32), ((2, 4, 64), torch.bfloat16)):
        x, residual, weight = make(shape, dtype, device=device)
        run(kata, x, residual, weight, given=described(x))  # fails on any torch work


def test_outputs_like_input(kata, device):
    """it returns (y, residual): y a new tensor with x's shape, dtype and device

    The fused op replaces two: h = x + residual, then y = norm(h). The caller needs both, the
    residual for the next layer's add and y for the next layer's input.

    Allocate y empty in x's shape and dtype, and give back the pair (y, residual).

    [where y belongs] Callers take the pair apart by position, y first: the other way round,
    the next layer gets the residual stream as its input, and adds onto y.

    [where y belongs] The pair is (y, residual): the new tensor y first, then the caller's own
    residual tensor, which now holds the sum.
    """
    for shape in ((8, 64), (2, 3, 64)):
        x, residual, weight = make(shape, device=device)
        given = described(x)
        y, res = pair(run(kata, x, residual, weight, given=given), given)
        for name, got in (("y", y), ("the residual returned", res)):
            if (got.shape, got.dtype, got.device) != (x.shape, x.dtype, x.device):
                fail(
                    f"{given}: {name} is a {shape_of(got)} tensor on {got.device}, expected "
                    f"{shape_of(x)} on {x.device}, like x."
                )


def test_masked_last_block(kata, device):
    """every load and store stays inside its tensor (here on rows ending mid-block: N = 100, 1000)

    A block of 128 lanes covers a row of 100 with 28 to spare. Unmasked, those lanes read the
    next row (and past the end of x and of the residual in the last row), read past the end of
    the weight in every row, and store past the end of the residual and of y. A program that
    takes several rows has spare rows too, past the last one. Every check's call is watched for
    it; this one is named for it.

    Lane i of the block is real only when i < N, and row r only when r < M (M rows in all):
    every load and every store uses that mask, and spare lanes load as 0.
    """
    # 7 rows too: a program that takes several rows (a persistent grid of up to 6, 2-row tiles)
    # meets rows past M in its last round.
    for shape in ((4, 100), (1, 1000), (7, 100)):
        x, residual, weight = make(shape, device=device)
        given = f"{described(x)} (N = {shape[-1]}, not a power of two)"
        call = run(kata, x, residual, weight, given=given)  # fails on any access outside
        y, res = pair(call, given)
        for name, got in (("y", y), ("the residual", res)):
            # NaN from elsewhere (a buffer from torch.empty) is the value checks' to tell.
            if call.undefined_lanes and got.shape == x.shape and got.isnan().any():
                if call.fault:
                    pytest.skip(call.fault)
                row = int(got.isnan().nonzero()[0][0])
                fail(
                    f"{given}: {name} has NaN in row {row} although the inputs are finite, and "
                    "a masked load without other= left the lanes it masked undefined: they read "
                    "NaN here (on a GPU, whatever the memory held). Load with mask=cols < N and "
                    "other=0.0, so that the spare lanes add zeros to the sum of squares."
                )


def test_residual_is_the_sum(kata, device):
    """the residual returned holds x + residual, rounded to x's dtype

    The kernel's first job is the residual connection itself: h = x + residual, element by
    element, which the next layer adds its own output to. It must be written back, not only
    used for the norm.

    s = x + r per element, stored where the residual was read (hᵢ = xᵢ + rᵢ), before or after
    the norm is computed from it.
    """
    for shape in ((8, 64), (3, 100)):
        x, residual, weight = make(shape, device=device)
        given = described(x)
        call = run(kata, x, residual, weight, given=given)
        _, res = pair(call, given)
        if res.shape == x.shape and torch.equal(res, residual):
            fail(
                f"{given}: the residual returned still holds the residual passed in, not "
                "x + residual. Store the sum back where the residual was read, in the kernel."
            )
        FUSED.expect_values(call, summed(x, residual), given=given, got=res, what="residual")


def test_residual_in_place(kata, device):
    """the sum is written into the caller's residual tensor, in x's dtype; x is left as it was

    As in vLLM and FlashInfer, the residual stream is updated in place: no new tensor per
    layer, and it stays in the activations' dtype. Only y is new, so x, which the caller may
    still use, is not overwritten.

    The kernel stores the sum through the residual's own pointer (same tensor, same dtype) and
    y through a new one; nothing is stored through x's pointer.
    """
    x, residual, weight = make((4, 64), torch.float16, device=device)
    given = described(x)
    call = run(kata, x, residual, weight, given=given)
    _, res = pair(call, given)
    x_given, residual_given = call.inputs[0], call.inputs[1]
    if res.dtype != x.dtype:
        fail(
            f"{given}: the residual returned is {dtype_name(res.dtype)}, expected "
            f"{dtype_name(x.dtype)}: the residual stream stays in the activations' dtype, "
            "updated in place in the caller's tensor (a float32 copy would double its bytes)."
        )
    if res.data_ptr() != residual_given.data_ptr():
        if torch.equal(residual_given, residual):
            held = "still holds what it held"
        elif torch.allclose(residual_given, summed(x, residual), rtol=RTOL[x.dtype], atol=0):
            held = "holds the sum, but it is not the tensor returned"
        else:
            held = "holds neither the sum nor what it held"
        fail(
            f"{given}: the residual returned is another tensor than the caller's, and the "
            f"caller's residual {held}. Update it in place: store x + residual through the "
            "residual's own pointer, and return that tensor."
        )
    if not torch.equal(x_given, x):
        fail(
            f"{given}: x was overwritten (vLLM's op writes y over x; this one leaves x as it "
            "was and returns y in a new tensor). Store only into the residual and into y."
        )
    FUSED.expect_values(call, summed(x, residual), given=given, got=res, what="residual")


def test_formula(kata, device):
    """float32 rows: y = h / sqrt(mean(h²) + eps) · weight, with h = x + residual, any eps

    The norm is of the sum, not of x: that is what feeds the next layer. eps is inside the
    square root, defaults to 1e-6 and is what the caller passes.

    Per row, h being the summed residual, ms = (1/N) Σ h², rstd = 1/√(ms + ε), y = h · rstd · w.
    """
    # scale 1e-3: mean(h²) near 2e-6, where the default eps of 1e-6 changes y by a fifth.
    for eps, scale in ((None, 2.0), (None, 1e-3), (0.1, 0.1)):
        x, residual, weight = make((8, 64), device=device, scale=scale, shift=scale / 4)
        given = described(x) if eps is None else described(x, eps=eps)
        call = run(kata, x, residual, weight, given=given, eps=eps)
        expect_both(call, x, residual, weight, given=given, eps=1e-6 if eps is None else eps)


def test_non_power_of_two_width(kata, device):
    """rows of widths between powers of two (N = 100, 1000, 77) are right

    The block is the next power of two, but the row has N elements: the spare lanes must
    neither count in the mean nor add anything to it.

    ms = (1/N) Σ h² over the N real columns: the spare lanes load as 0 (x and the residual
    both) and the divisor is N, not BLOCK; eps is added once, to ms, not to each lane's square.
    """
    # eps 0.1 on rows of 77 (a block of 128): eps added in every lane, spare ones too, shows.
    for shape, eps, scale in (((16, 100), None, 1.0), ((4, 1000), None, 1.0), ((3, 77), 0.1, 0.1)):
        x, residual, weight = make(shape, device=device, scale=scale)
        given = described(x) if eps is None else described(x, eps=eps)
        call = run(kata, x, residual, weight, given=given, eps=eps)
        expect_both(call, x, residual, weight, given=given, eps=1e-6 if eps is None else eps)


def test_wide_rows(kata, device):
    """rows wider than a fixed block (N = 10000) are added and normalized in full

    A row of 10000 elements does not fit a block of 1024 or 4096 fixed in advance, yet its mean
    of squares covers all N elements: the block follows N, or one program loops over the row
    block by block, or the programs that split a row add up their partial sums before any of
    them scales.

    One block of the next power of two at or above N; or a fixed block and two loops, the
    first adding, storing the sum and summing its squares, the second reading the stored sum
    back to scale it; or partial sums added atomically into a zeroed per-row total, and a
    second kernel that scales.
    """
    x, residual, weight = make((4, 10000), device=device)
    given = described(x)
    expect_both(run(kata, x, residual, weight, given=given), x, residual, weight, given=given)


def test_race_free(kata, device):
    """programs never update the same element at once: each row's sum by one program, or atomically

    A row split across programs (a grid over rows and column blocks) has its sum of squares in
    pieces, one per program: added into one buffer with a plain load, add and store, the
    programs, which on a GPU run at the same time, lose each other's updates. Triton's
    interpreter runs them one after another, so the values come out right there: the grader
    watches which program touches which element instead. Every check's call is watched for
    it; this one is named for it. Compiled on a GPU this cannot be watched; only wrong values
    show.

    Either one program owns each row (the whole row in one block, or a loop over its blocks),
    or the programs that share a row add their partial sums into a zeroed buffer atomically
    (tl.atomic_add) or under a lock (tl.atomic_cas to take it, asked again until it succeeds;
    tl.atomic_xchg to release), and a second kernel scales the row by the total.
    """
    # Rows as wide as the contract goes: a kernel that splits rows at all splits these.
    x, residual, weight = make((2, 16384), device=device)
    given = described(x)
    call = run(kata, x, residual, weight, given=given)  # interpreted: a race fails the call
    if not triton_engine.INTERPRETED:  # compiled, a race shows only as lost updates
        expect_both(call, x, residual, weight, given=given)


def test_leading_dims(kata, device):
    """any number of rows and leading dims: x of shape (B, T, N), 37 or 267 rows, or (A, B, T, N)

    The kernel works on rows; the leading dims only say how many rows there are, which is
    their product, not x.shape[0]. Nor need that number divide evenly among the programs: 37
    rows do not, whatever the grid. And however many there are, each one is added and
    normalized: 267 rows are more than a persistent grid sized to a GPU takes in one pass (an
    H100 SXM has 132 SMs; two programs on each take 264), and more than a loop of a fixed
    number of rounds may reach.

    Flatten x to rows of N (their number M is the product of the leading dims), launch one
    program per row, and view y back in x's shape. A program that takes several rows takes
    the ceiling of rows over programs, the last ones masked (row < M); a persistent grid of P
    programs takes rows p, p + P, p + 2P, ... for as long as they are below M.
    """
    # 267 = 256 + 11 rows, at a narrow N that fills its block: the interpreter runs them
    # cheaply, and a mistake in the masking of spare lanes is the width checks' to catch.
    for shape in ((1, 37, 64), (2, 2, 3, 64), (3, 89, 32)):
        x, residual, weight = make(shape, device=device)
        given = described(x)
        expect_both(run(kata, x, residual, weight, given=given), x, residual, weight, given=given)


def test_row_stride(kata, device):
    """strided rows of x (x = buffer[:, :N]) are read at x's stride; y and the residual at N

    x may be a slice of a wider buffer (the attention output inside a larger one) whose rows
    are more than N elements apart. The residual and y are contiguous: their rows are N apart,
    which is not x's stride.

    Hand the kernel x's row stride and address column c of row r at r · stride + c in x, at
    r · N + c in the residual and in y, which is allocated contiguous whatever x's strides.
    """
    cases = (((8, 160), (slice(None), slice(0, 100))), ((2, 3, 80), (..., slice(0, 64))))
    for buffer_shape, index in cases:
        buffer = torch.full(buffer_shape, math.nan, device=device)
        x = buffer[index]
        x.copy_(torch.randn(x.shape, device=device))
        residual = torch.randn(x.shape, device=device)
        weight = torch.randn(x.shape[-1], device=device)
        given = (
            f"{described(x)} with rows {x.stride(-2)} elements apart "
            f"(x = buffer{list(buffer_shape)}[..., :{x.shape[-1]}])"
        )
        call = run(kata, x, residual, weight, given=given)
        y, _ = pair(call, given)  # a pair of tensors, or the failure says what it is instead
        advice = "read row i of x at X + i * x.stride(0), and the residual and y at i * N."
        with triton_engine.blame_strides(advice, right_when_contiguous, kata, x, residual, weight):
            expect_both(call, x, residual, weight, given=given)
        if not y.is_contiguous():
            fail(
                f"{given}: y has strides {tuple(y.stride())}, expected {tuple(residual.stride())}: "
                "y is a new contiguous tensor, its rows N apart like the residual's, whatever "
                "x's row stride."
            )


def test_fp32_accumulation(kata, device):
    """float16 inputs of magnitude 300 do not overflow: the kernel accumulates in float32

    float16's largest value is 65504 and a sum near 600 squares to 360000: squares taken in
    float16 are inf, and the whole row becomes 0. (The dtypes have a check of their own.)

    Convert the sum to float32 before squaring, so Σ h² accumulates in float32; the store
    rounds back to y's dtype.
    """
    x, residual, weight = make((8, 64), torch.float16, device=device, scale=300.0)
    given = f"{described(x)}, x and residual = randn * 300"
    call = run(kata, x, residual, weight, given=given)
    y, _ = pair(call, given)
    want = expected(x, residual, weight)
    if y.is_floating_point():
        y = y.to(want.dtype)
    FUSED.expect_values(call, want, given=given, got=y, rtol=RTOL[torch.float16])


@pytest.mark.parametrize("dtype", HALF, ids=dtype_name)
def test_half_precision(kata, device, dtype):
    """float16 and bfloat16 inputs give y and the residual back in that dtype, within its tolerance

    Half precision in, half precision out: the activations stay in their dtype, and writing y
    in float32 would double the bytes stored. Only the arithmetic inside is float32.

    y is allocated in x's dtype; compute in float32 and round at the stores.
    """
    x, residual, weight = make((8, 100), dtype, device=device, scale=2.0)
    given = described(x)
    expect_both(run(kata, x, residual, weight, given=given), x, residual, weight, given=given)


def test_residual_rounded_before_norm(kata, device):
    """float16: y is the norm of the residual as stored (rounded), not of the float32 sum

    The next layer adds onto the residual as stored, in float16, so y is computed from exactly
    those values, as vLLM does: the values scaled and their mean square both. Taking either
    from the float32 sum instead moves y by up to an ulp. Checked here with integers near 1024
    plus ±0.45: the sum loses its fraction in float16. In half the rows the residual has x's
    sign, so that every sum rounds towards zero and the mean square's error does not average out.

    Round h = x + r to the residual's dtype, store it, then convert that rounded value to
    float32 and normalize it, mean square included: y = round(h) · rstd(round(h)) · w.
    """
    g = torch.Generator().manual_seed(83)
    sign = torch.randint(0, 2, (2, 8, 64), generator=g) * 2.0 - 1.0
    sign[1, 4:] = sign[0, 4:]  # rows 4 to 7: the residual has x's sign, sums round towards 0
    x = (torch.randint(1024, 1536, (8, 64), generator=g) * sign[0]).half().to(device)
    residual = (0.45 * sign[1]).half().to(device)
    weight = torch.ones(64, dtype=torch.float16, device=device)
    given = (
        f"{described(x)}, x integers of magnitude 1024 to 1535, residual ±0.45 (of x's sign in "
        "rows 4 to 7)"
    )
    call = run(kata, x, residual, weight, given=given)
    y, _ = pair(call, given)
    want = expected(x, residual, weight, exact=True)
    if y.shape != x.shape or y.dtype != x.dtype:
        fail(f"{given}: y is a {shape_of(y)} tensor, expected {shape_of(x)}.")
    if call.fault:
        pytest.skip(call.fault)
    # Rounded once from the right value, y is within half an ulp of it: 0.6 leaves room for
    # float32 arithmetic. Measured on these inputs: the norm of the unrounded sum lands up to 1.4
    # ulp away in rows 0 to 3 (in rows 4 to 7 its two errors cancel), the rounded sum scaled by
    # the unrounded sum's mean square up to 1.2 ulp away in rows 4 to 7 (in rows 0 to 3 the
    # mean square's errors average out); both more than 0.6 ulp away on about 100 elements.
    off = (y.double().cpu() - want.cpu()).abs() / ulp(want.cpu(), torch.float16)
    if off.max() > 4 and not _right_in_float32(kata, x.float(), residual.float(), weight.float()):
        # Rounding moves y by an ulp or two: this far off is the formula's mistake.
        fail_for(
            "test_formula",
            f"{given}: y is up to {off.max().item():.0f} ulp off, far more than rounding moves "
            "it, and so it is for the same values in float32: see the formula check.",
        )
    if off.max() > 0.6:
        first = [int(i) for i in (off > 0.6).nonzero()[0]]
        fail(
            f"{given}: y at {first} is {y[tuple(first)].item():.6g}, "
            f"{off[tuple(first)].item():.2f} ulp from {want[tuple(first)].item():.6g}, the norm "
            f"of the residual as stored ({int((off > 0.6).sum())} of {y.numel()} elements are "
            "more than 0.6 ulp off). Compute the norm, its mean square included, from the sum "
            "rounded to float16, as stored, not from the float32 sum."
        )


@pytest.mark.parity
def test_single_vector(kata, device):
    """a single vector x of shape (N,) is one row, as F.rms_norm takes it

    A single token's activations have no row dimension, so there is no second-to-last size or
    stride to read.

    Flattened to rows of N, a vector is one row of N: take the sizes and strides from that
    2-D view, and view y back as x.
    """
    x, residual, weight = make((64,), device=device)
    given = described(x)
    expect_both(run(kata, x, residual, weight, given=given), x, residual, weight, given=given)


# -- how the checks call fused_add_rms_norm, and what they expect -----------------------------

FUSED = Oversight(
    function="fused_add_rms_norm",
    inputs=(("x", math.nan), ("the residual", math.nan), ("the weight", 2.0)),
    activations=(0, 1),  # x and the residual: torch work on either is a pass through memory
    views=triton_engine.VIEWS,
    in_bounds="test_masked_last_block",
    does_the_work="test_kernel_does_the_work",
    race_free="test_race_free",
    stray_advice="Mask every tl.load and tl.store, the weight's too (mask = cols < N, and "
    "rows < M as well where a program takes several rows), and move each pointer only within "
    "its own tensor: x by its row stride, the residual and y by N (they are contiguous), the "
    "weight not at all.",
    overrun_advice="Mask the stores (cols < N, and rows < M where a program takes several "
    "rows), offset each tensor's rows by its own stride, and launch no more programs than the "
    "rows need.",
    copy_advice="Let the kernel read x and the residual where they are, in their own dtype: pass "
    "x's row stride and cast after tl.load.",
    work_advice="load x and the residual in the kernel, add them there, store the sum back into "
    "the residual and normalize it; torch should only allocate y and reshape.",
    launch_advice="Launch yours with kernel[grid](...), one program per row.",
    unwritten_advice="Does every row get a program, and does each program cover all N columns "
    "of its row?",
    race_advice="Give each row's sum of squares to one program (the whole row in one block, or "
    "a loop over its blocks), or let the programs that share a row add their partial sums with "
    "tl.atomic_add into a zeroed buffer (or under a lock: tl.atomic_cas / tl.atomic_xchg), then "
    "scale in a second kernel.",
)
# float16 outputs get rtol 2e-3 (two ulps): rounding y before the weight, as vLLM does, is fine.
RTOL = {torch.float16: 2e-3}


def run(kata, x, residual, weight, *, given, eps=None) -> Call:
    """kata.fused_add_rms_norm on fenced copies of x, residual and weight, overseen."""
    kwargs = {} if eps is None else {"eps": eps}
    return FUSED.run(kata, x, residual, weight, given=given, **kwargs)


def pair(call: Call, given: str) -> tuple[torch.Tensor, torch.Tensor]:
    """What the call returned, which must be a pair of tensors (y, residual), in that order."""
    out = call.out
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        kind = f"a {type(out).__name__} of {len(out)}" if isinstance(out, (tuple, list)) else None
        fail(
            f"{given}: fused_add_rms_norm returned {kind or type(out).__name__}; it returns a "
            "pair (y, residual): the normalized output and the updated residual."
        )
    for place, name, got in (("first", "y", out[0]), ("second", "the residual", out[1])):
        if not isinstance(got, torch.Tensor):
            fail(
                f"{given}: fused_add_rms_norm returned a pair whose {place} element, {name}, is "
                f"{'None' if got is None else 'a ' + type(got).__name__}, not a tensor. It "
                "returns (y, residual): y a new tensor, and the caller's residual tensor itself."
            )
        if got.device != call.inputs[0].device:  # a meta tensor has no values to check
            fail(f"{given}: {name} is on {got.device}, expected {call.inputs[0].device}, like x.")
    y, res = out
    caller = call.inputs[1]  # the residual as the function was given it
    if _storage(y) == _storage(caller) and _storage(res) != _storage(caller):
        fail(
            f"{given}: the first element of the pair fused_add_rms_norm returned is the "
            "caller's residual tensor, where y belongs, and the second is another tensor. "
            "Return them in the contract's order: (y, residual)."
        )
    return y, res


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def summed(x, residual):
    """x + residual, exact in float64, rounded once to x's dtype: what the residual must hold."""
    return (x.double() + residual.double()).to(x.dtype)


def expected(x, residual, weight, eps=1e-6, *, exact=False):
    """y for these inputs: the norm of the rounded sum (in float64 when exact, before rounding)."""
    return triton_engine.rms_norm_reference(summed(x, residual), weight, eps, exact=exact)


def make(shape, dtype=torch.float32, *, device, scale=1.0, shift=0.0):
    """x and a residual of this shape (randn * scale + shift), and a random weight."""
    x = (torch.randn(shape, device=device) * scale + shift).to(dtype)
    residual = (torch.randn(shape, device=device) * scale - shift / 2).to(dtype)
    weight = (torch.randn(shape[-1], device=device) * 0.5 + 1.0).to(dtype)
    return x, residual, weight


def described(x, **kwargs):
    extra = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return f"fused_add_rms_norm(x, residual, weight{extra}) on x {shape_of(x)}"


def expect_both(call: Call, x, residual, weight, *, given, eps=1e-6):
    """y and the residual returned match the contract (values within the dtype's tolerance)."""
    y, res = pair(call, given)
    rtol = RTOL.get(x.dtype)
    want = summed(x, residual)
    if res.shape == x.shape and res.dtype == x.dtype and not call.fault:
        # Rows that no program reached hold the residual as passed, in the tensor returned and
        # in the caller's, while the other rows hold the sum: say so by row.
        n = x.shape[-1]
        kept = (want != residual).reshape(-1, n).any(-1)
        for tensor in (res, call.inputs[1]):
            kept &= (tensor == residual).reshape(-1, n).all(-1)
        if kept.any() and not kept.all():
            fail(
                f"{given}: {int(kept.sum())} of {len(kept)} rows of the residual returned still "
                f"hold the residual passed in, the first row {int(kept.nonzero()[0])} of x "
                f"viewed as rows of N = {n}: no program added x to them. " + FUSED.unwritten_advice
            )
    FUSED.expect_values(call, want, given=given, got=res, what="residual")
    FUSED.expect_values(call, expected(x, residual, weight, eps), given=given, got=y, rtol=rtol)


def _right_in_float32(kata, x, residual, weight) -> bool:
    """Whether the function gets these float32 values right: the premise of a float16 check."""
    return triton_engine.passes(
        lambda: expect_both(run(kata, x, residual, weight, given=""), x, residual, weight, given="")
    )


def right_when_contiguous(kata, x, residual, weight) -> bool:
    """Whether the function gets these values right where x is contiguous, so that what went
    wrong with x's rows further apart is the strides' doing."""
    x = x.contiguous()

    def contiguous() -> None:
        call = run(kata, x, residual, weight, given=described(x))
        expect_both(call, x, residual, weight, given=described(x))

    return triton_engine.passes(contiguous)


def ulp(v: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The spacing of dtype's values at each |v| (normal range), in float64."""
    finfo = torch.finfo(dtype)
    exponent = torch.floor(torch.log2(v.abs().clamp_min(finfo.tiny)))
    return torch.exp2(exponent) * finfo.eps


# -- on a GPU: --perf -------------------------------------------------------------------------


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your fused_add_rms_norm and the unfused pair residual.add_(x) then
    F.rms_norm(residual), forward only. Both update the residual in place at every call."""
    setting = triton_engine.perf_setting(
        device,
        "The fused kernel moves 4 bytes per element of x's size (read x and the residual, write "
        "the residual and y); the unfused pair moves at least 5 (the add reads two and writes "
        "one, F.rms_norm reads it back and writes y), and more where F.rms_norm is not one "
        "fused kernel itself. Bandwidth is those 4 bytes over each side's time.",
    )
    x, residual, weight = make(setting.shape, setting.dtype, device=device)
    theirs = residual.clone()

    def unfused():
        return F.rms_norm(theirs.add_(x), (x.shape[-1],), weight, 1e-6), theirs

    return PerfCase(
        given=f"fused_add_rms_norm on x {shape_of(x)}{setting.where}",
        mine=lambda: kata.fused_add_rms_norm(x, residual, weight),
        builtin=unfused, builtin_name="add_ + F.rms_norm",
        bytes_moved=4 * x.nbytes, note=setting.note,
    )  # fmt: skip
