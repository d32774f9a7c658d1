"""Hidden checks for the Triton RMSNorm kata: the learner's fused forward kernel, run for real.

Where the kernel runs: with `--device cuda` on a GPU, compiled by Triton as in production;
everywhere else in Triton's interpreter, so that `python -m norm_katas grade triton-rmsnorm` works
on any machine, without the learner setting anything (the `engine` fixture: the grader's
triton_engine sets Triton up before the learner's file is imported). The interpreter runs one
program at a time with numpy, so the inputs here are small: about 410 programs in all, 267 of
them one case of many narrow rows (past one pass of a persistent grid).

How the engine is proven: before the learner's file loads, a probe runs small kernels of its
own on what these checks exercise, in float32, float16 and bfloat16. A float32 case gone wrong
means nothing can be graded: the grader says so (exit 3). A half-precision one is a fault of
the engine (Triton's interpreter computes bfloat16 products and sums on the raw bits): a check
whose call ran the faulty operation is skipped with a note that names the engine and suggests
--device cuda, never failed, and does not count: the kata is solved on the checks the engine
can grade.

Where the expected value comes from: F.rms_norm for float32, where every supported torch
agrees; for float16 and bfloat16 the contract written out in float64 (x · rsqrt(mean(x²) + eps)
· weight, then cast to x's dtype), because torch 2.4 computed half inputs in half precision and
later releases in float32 (see tests/test_rmsnorm.py).

How every call is overseen (run(), through which every check calls rms_norm):
- Memory. rms_norm gets copies of x and weight whose storage runs on past their last element
  (NaN after x, 2.0 after weight), and every float tensor it allocates is fenced too, filled
  with a sentinel: a store past the end of the output is reported, and an element no program
  wrote is named. Interpreted, every load and store is checked by address against the tensors
  its launch was given: an access outside them all, the weight's included, fails whatever the
  values there would have given. Compiled, Triton cannot be watched so: a read past the
  weight's end goes unseen on a GPU (its catalogue file says COMPILED = "pass").
- Torch work. Work on the activations (x, what rms_norm allocates, and anything computed from
  them) fails, copies of x included (.contiguous(), .clone(), .to(), .copy_()); views,
  allocation, and work on the weight alone (a float32 copy of its N elements) do not. A call
  that launches no kernel fails too.
Each such failure belongs to the check named for it (test_masked_last_block for memory,
test_kernel_does_the_work for torch work), which the report ranks it as: whichever check runs
into a mistake first, the headline names it.

Each core property in every dtype where it applies (every call is overseen for memory and torch
work whatever its dtype; bfloat16 values are graded on a GPU only, see the engine above):

    property                  float32                          float16            bfloat16
    the kernel does the work  kernel_does_the_work             (every call)       kernel_does_the_
                                                                                  work
    shape and dtype           output_like_input                half_precision     half_precision
    spare lanes masked        masked_last_block                half_precision     half_precision
    formula, eps (default)    formula                          half_precision     half_precision
    any width N               non_power_of_two_width,          half_precision     half_precision
                              wide_rows                        (N = 100)          (N = 100)
    rows: leading dims,       leading_dims, row_stride         -                  -
    strides
    float32 accumulation      -                                fp32_accumulation  -
"""

import math
import statistics
import time
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

from norm_katas.checks import (
    PerfCase,
    Suite,
    dtype_name,
    expect_like,
    expect_tensor,
    fail,
    shape_of,
    triton_engine,
)
from norm_katas.checks.triton_engine import HALF, Call, Oversight, expect_input_kept

SUITE = Suite(
    no_device_note=triton_engine.no_device_note("the bandwidth report"),
    device_note=triton_engine.weight_unseen("x and the output"),
)
engine = triton_engine.engine  # autouse: Triton set up and proven before the learner's file


# -- the checks -------------------------------------------------------------------------------


@triton_engine.first_check  # a minute, not 10 s: it sets the engine up too
def test_kernel_does_the_work(kata, device):
    """your Triton kernel does the work: rms_norm launches it, and torch computes nothing

    The kernel exists to read x once and write y once. Any torch operation on the activations
    outside it (a contiguous copy of x, a cast, a mean, a fallback to torch) is another full
    pass through memory, or means the kernel is not used at all. Every check's call is watched
    for it; this one is named for it.

    Outside the kernel only allocation and views: an empty output, x viewed as rows of N, that
    output viewed back in x's shape, and the row strides. Load, square, sum, rsqrt, scale and
    cast between tl.load and tl.store.
    """
    for shape, dtype in (((8, 64), torch.float32), ((2, 4, 64), torch.bfloat16)):
        x, weight = make(shape, dtype, device=device)
        run(kata, x, weight, given=described(x))  # fails on any torch work, or no launch


def test_input_unmodified(kata, device):
    """the input x is left as it was: y goes into a tensor of its own

    In a transformer, x is the residual stream: after the norm it is added back, h = x +
    attn(rms_norm(x)). A kernel that stores y over x (to save an allocation) hands the caller
    y where x was, and autograd's version counter does not see a Triton store. The other
    checks compare y with the x they handed over; this one looks at x after the call.

    Allocate y as a new empty tensor of x's shape, dtype and device, and store into it; x is
    only loaded, never stored to.
    """
    x, weight = make((4, 64), torch.float32, device=device)
    given = described(x)
    expect_input_kept(run(kata, x, weight, given=given), x, given=given)


def test_output_like_input(kata, device):
    """the output has x's shape, dtype and device, for any number of leading dims

    rms_norm is a drop-in for F.rms_norm over the last dimension: the kernel sees rows, the
    caller gets back the shape it passed in.

    View x as rows of N, allocate an empty output of that shape in x's dtype, launch one
    program per row, and give back the output viewed in x's shape.
    """
    for shape in ((8, 64), (2, 3, 64)):  # (N,) is a parity check of its own
        x, weight = make(shape, device=device)
        given = described(x)
        expect_like(run(kata, x, weight, given=given).out, x, given=given)


def test_masked_last_block(kata, device):
    """every load and store stays inside its tensor (here on rows ending mid-block: N = 100, 1000)

    Triton's arange takes a power-of-two length, so a block of 128 covers a row of 100 with 28
    lanes to spare. Without a mask those lanes read the next row and, in the last row, past the
    end of x; past the end of the weight in every row; and store past the end of y. On a GPU
    that is garbage or an illegal memory access, whatever the values read. Every check's call
    is watched for it; this one is named for it.

    Lane i of the block is real only when i < N: every load (of x and of the weight) and the store
    use that mask, and spare lanes load as 0.
    """
    # 7 rows too: a program that takes several rows (a persistent grid of up to 6, 2-row tiles)
    # meets rows past M in its last round.
    for shape in ((4, 100), (1, 1000), (7, 100)):
        x, weight = make(shape, device=device)
        given = f"{described(x)} (N = {shape[-1]}, not a power of two)"
        call = run(kata, x, weight, given=given)  # fails on any access outside the tensors
        out = expect_tensor(call.out, "rms_norm")
        # Interpreted, lanes a masked load left undefined are known (call.undefined_lanes): NaN
        # from elsewhere (a buffer from torch.empty) is the value checks' to tell.
        undefined = call.undefined_lanes or not triton_engine.INTERPRETED
        if undefined and out.shape == x.shape and out.isnan().any():
            if call.fault:
                pytest.skip(call.fault)
            row = int(out.isnan().nonzero()[0][0])
            fail(
                f"{given}: the output has NaN in row {row} although x and weight are finite: the "
                "kernel used lanes N and beyond of its block, which read NaN here: past the end "
                "of x the grader fills it with NaN, and a masked load without other= leaves "
                "them undefined (NaN here). Load with mask=cols < N and other=0.0, so that the "
                "spare lanes add zeros to the sum of squares."
            )


def test_formula(kata, device):
    """float32 rows match F.rms_norm: y = x / sqrt(mean(x²) + eps) · weight, with any eps

    Each row is divided by its root mean square, eps inside the square root, then scaled by
    the weight element by element. eps defaults to 1e-6 (not 1e-5) and is what the caller
    passes.

    Per row: ms = (1/N) Σ x², rstd = 1/√(ms + ε), y = x · rstd · w, with the same weight w for every
    row.
    """
    # A mean square near the default eps (scale 1e-3) shows that default: 1e-6, not 1e-5.
    for eps, scale in ((None, 2.0), (None, 1e-3), (0.1, 0.1)):
        x, weight = make((8, 64), device=device, scale=scale, shift=scale / 4)
        given = described(x) if eps is None else described(x, eps=eps)
        call = run(kata, x, weight, given=given, eps=eps)
        expect_values(call, expected(x, weight, 1e-6 if eps is None else eps), given=given)


def test_non_power_of_two_width(kata, device):
    """rows of widths between powers of two (N = 100, 1000, 77) match F.rms_norm

    The block is the next power of two, but the row has N elements: the spare lanes are not
    part of the mean, nor of anything added to it.

    ms = (1/N) Σ x² over the N real columns: the block's spare lanes load as 0 and the divisor is N,
    not BLOCK; eps is added once, to ms, not to each lane's square.
    """
    # eps 0.1 on rows of 77 (a block of 128): eps added in every lane, spare ones too, shows.
    for shape, eps, scale in (((16, 100), None, 1.0), ((4, 1000), None, 1.0), ((3, 77), 0.1, 0.1)):
        x, weight = make(shape, device=device, scale=scale)
        given = described(x) if eps is None else described(x, eps=eps)
        call = run(kata, x, weight, given=given, eps=eps)
        expect_values(call, expected(x, weight, 1e-6 if eps is None else eps), given=given)


def test_wide_rows(kata, device):
    """rows wider than a fixed block (N = 10000) are normalized in full

    A row of 10000 elements does not fit a block of 1024 or 4096 fixed in advance: either the
    block follows N, or the program loops over the row block by block.

    Either the block is the next power of two at or above N (one block per row, up to 16384), or
    the block is fixed and the program walks the row twice in steps of a block: once to sum
    the squares, then again to scale and store.
    """
    x, weight = make((4, 10000), device=device)
    given = described(x)
    expect_values(run(kata, x, weight, given=given), expected(x, weight), given=given)


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
    x, weight = make((2, 16384), device=device)
    given = described(x)
    call = run(kata, x, weight, given=given)  # interpreted: a race fails the call itself
    if not triton_engine.INTERPRETED:  # compiled, a race shows only as lost updates
        expect_values(call, expected(x, weight), given=given)


def test_leading_dims(kata, device):
    """any number of rows and leading dims: x of shape (B, T, N) or (A, B, T, N), and 267 rows

    The kernel normalizes rows; the leading dims only say how many rows there are, which is
    their product, not x.shape[0]. However many there are, each one is normalized: 267 rows
    are more than a persistent grid sized to a GPU takes in one pass (an H100 SXM has 132
    SMs; two programs on each take 264), and more than a loop of a fixed number of rounds
    may reach.

    Flatten x to rows of N (their number M is the product of the leading dims), launch one
    program per row, and view y back in x's shape. A persistent grid of P programs takes rows
    p, p + P, p + 2P, ... for as long as they are below M.
    """
    # 267 = 256 + 11 rows, at a narrow N that fills its block: the interpreter runs them
    # cheaply, and a mistake in the masking of spare lanes is the width checks' to catch.
    for shape in ((2, 3, 64), (2, 2, 3, 64), (3, 89, 32)):
        x, weight = make(shape, device=device)
        given = described(x)
        expect_values(run(kata, x, weight, given=given), expected(x, weight), given=given)


def test_row_stride(kata, device):
    """strided rows (x = buffer[:, :N]) are read at x's stride and written at the output's

    A slice of a wider buffer has rows more than N elements apart; copying it first would cost
    a pass through memory. The output is a new tensor whose rows are N apart: its stride is not
    x's.

    Hand the kernel the row strides of x and of y, and address column c of row r at r · stride
    + c in each (x flattened to rows keeps its stride when that is a view).
    """
    cases = (((8, 160), (slice(None), slice(0, 100))), ((2, 3, 80), (..., slice(0, 64))))
    for buffer_shape, index in cases:
        buffer = torch.full(buffer_shape, math.nan, device=device)
        x = buffer[index]
        x.copy_(torch.randn(x.shape, device=device))
        weight = torch.randn(x.shape[-1], device=device)
        given = (
            f"{described(x)} with rows {x.stride(-2)} elements apart "
            f"(x = buffer{list(buffer_shape)}[..., :{x.shape[-1]}])"
        )
        call = run(kata, x, weight, given=given)
        advice = "read row i at X + i * x.stride(0), and write it at Y + i * y.stride(0)."
        with triton_engine.blame_strides(advice, right_when_contiguous, kata, x, weight):
            expect_values(call, expected(x, weight), given=given)


def test_fp32_accumulation(kata, device):
    """a float16 input of magnitude 300 does not overflow: the kernel accumulates in float32

    float16's largest value is 65504 and 300² = 90000: squares taken in float16 are inf, and
    the whole row becomes 0. (The output's dtype has a check of its own, the next one.)

    Convert each loaded x to float32 before squaring, so Σ x² accumulates in float32; the store
    rounds back to y's dtype.
    """
    x, weight = make((8, 64), torch.float16, device=device, scale=300.0)
    given = f"{described(x)}, x = randn * 300"
    call = run(kata, x, weight, given=given)
    out, want = expect_tensor(call.out, "rms_norm"), expected(x, weight)
    if out.is_floating_point():
        call = replace(call, out=out.to(want.dtype))
    expect_values(call, want, given=given)


@pytest.mark.parametrize("dtype", HALF, ids=dtype_name)
def test_half_precision(kata, device, dtype):
    """float16 and bfloat16 inputs give that dtype back, within its tolerance

    Half precision in, half precision out: the caller's activations stay in their dtype, and
    writing float32 would double the bytes stored. Only the arithmetic inside is float32.

    y is allocated in x's dtype; compute in float32 and round once, at the store.
    """
    x, weight = make((8, 100), dtype, device=device, scale=2.0)
    given = described(x)
    expect_values(run(kata, x, weight, given=given), expected(x, weight), given=given)


@pytest.mark.parity
def test_single_vector(kata, device):
    """a single vector x of shape (N,) is one row, as F.rms_norm takes it

    F.rms_norm accepts any x whose last dimension is N, a 1-D x included. It has no row
    dimension, so there is no second-to-last size or stride to read.

    Flattened to rows of N, a vector is one row of N: take the sizes and strides from that
    2-D view, and view y back as x.
    """
    x, weight = make((64,), device=device)
    given = described(x)
    expect_values(run(kata, x, weight, given=given), expected(x, weight), given=given)


# -- how the checks call rms_norm, and what they expect ---------------------------------------

# What rms_norm may do outside its kernel, the checks its mistakes there belong to, and what
# the learner is told to do instead.
RMS_NORM = Oversight(
    function="rms_norm",
    inputs=(("x", math.nan), ("the weight", 2.0)),  # what a read past x or past weight finds
    views=triton_engine.VIEWS | triton_engine.SPLITS_AND_FILLS,
    in_bounds="test_masked_last_block",
    does_the_work="test_kernel_does_the_work",
    race_free="test_race_free",
    stray_advice="Mask every tl.load and tl.store, the weight's too (mask = cols < N, and rows < M "
    "as well where a program takes several rows), and move each pointer only within its own "
    "tensor: x and y by their row strides, the weight not at all.",
    overrun_advice="Mask the store (tl.store(..., mask=cols < N)), offset each tensor's rows by "
    "its own stride, and launch one program per row, no more.",
    copy_advice="Let the kernel read x where it is, in its own dtype: pass the row stride "
    "(X + row * stride_x + cols) and cast after tl.load.",
    work_advice="do the arithmetic and the casts in the kernel; torch should only allocate the "
    "output and reshape.",
    launch_advice="Launch yours with kernel[grid](...), one program per row.",
    unwritten_advice="Does every row get a program, and does each program cover all N columns "
    "of its row?",
    race_advice="Give each row's sum of squares to one program (the whole row in one block, or "
    "a loop over its blocks), or let the programs that share a row add their partial sums with "
    "tl.atomic_add into a zeroed buffer (or under a lock: tl.atomic_cas / tl.atomic_xchg), then "
    "scale in a second kernel.",
)

# float16 outputs get rtol 2e-3 (two ulps): a kernel that rounds x * rstd to float16 before
# multiplying by a float16 weight, as Hugging Face's LLaMA does in torch, is still correct.
RTOL = {torch.float16: 2e-3}


def run(kata, x, weight, *, given, eps=None) -> Call:
    """kata.rms_norm on fenced copies of x and weight, overseen (see the header)."""
    kwargs = {} if eps is None else {"eps": eps}
    return RMS_NORM.run(kata, x, weight, given=given, **kwargs)


def expect_values(call: Call, want, *, given):
    """The call's output matches want, every element written; skipped on an engine fault."""
    RMS_NORM.expect_values(call, want, given=given, rtol=RTOL.get(want.dtype))


def expected(x, weight, eps=1e-6):
    """F.rms_norm for float32; the contract written out in float64 for half dtypes."""
    return triton_engine.rms_norm_reference(x, weight, eps)


def make(shape, dtype=torch.float32, *, device, scale=1.0, shift=0.0):
    """x of this shape (randn * scale + shift) and a random weight for its last dimension."""
    x = (torch.randn(shape, device=device) * scale + shift).to(dtype)
    weight = (torch.randn(shape[-1], device=device) * 0.5 + 1.0).to(dtype)
    return x, weight


def described(x, **kwargs):
    extra = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return f"rms_norm(x, weight{extra}) on x {shape_of(x)}"


def right_when_contiguous(kata, x, weight) -> bool:
    """Whether the function gets these values right where x is contiguous, so that what went
    wrong with x's rows further apart is the strides' doing."""
    x = x.contiguous()
    return triton_engine.passes(
        lambda: expect_values(
            run(kata, x, weight, given=described(x)), expected(x, weight), given=""
        )
    )


# -- on a GPU: the bandwidth report, --perf ---------------------------------------------------


@pytest.mark.info
class TestBandwidth:
    """The bandwidth report: information for the learner, never a pass or a fail.

    It sits in a class rather than beside the checks because it is not one: nothing the learner
    writes can fail it, so no wrong implementation proves it, and the self-tests' rule that
    every check is failed by one reads the module-level test functions only. It reports through
    pytest.skip, whose message the checklist prints apart from the checks (the `info` mark),
    and it is never counted.
    """

    def test_bandwidth(self, kata, device, request):
        """bandwidth report (information only, never graded)

        A memory-bound kernel is as fast as the bytes it moves allow: compare it with a copy of
        the same bytes.
        """
        if device.type != "cuda":
            asked = str(request.config.getoption("device")).startswith("cuda")
            pytest.skip(
                "on the CPU there is nothing to measure"
                + ("" if asked else " (on a GPU: --device cuda)")
            )
        pytest.skip(_bandwidth_report(kata, device))


def _seconds(fn) -> float:
    """Median GPU time of one call of fn, from batches of 10 calls between CUDA events.

    Each batch is queued behind a 1 ms busy-wait on the GPU, so that the calls run back to back
    there (as they would from a CUDA graph) and Python's launch overhead is not what is timed.
    """
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(15):
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(2_000_000)  # GPU clock cycles: about 1 ms
        start.record()
        for _ in range(10):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 10 / 1e3)
    return statistics.median(times)


def _bandwidth_report(kata, device) -> str:
    m, n = 8192, 4096
    x = torch.randn(m, n, device=device, dtype=torch.bfloat16)
    weight = torch.randn(n, device=device, dtype=torch.bfloat16)
    copy = torch.empty_like(x)
    moved = 2 * x.numel() * x.element_size()  # x read once, y written once
    try:
        kata.rms_norm(x, weight)  # compiles
        torch.cuda.synchronize()
        started = time.perf_counter()
        out = kata.rms_norm(x, weight)
        torch.cuda.synchronize()
        once = time.perf_counter() - started
        if once > 0.05:  # a copy of these 128 MB takes about 0.05 ms
            return f"not measured: one call on bf16 ({m}, {n}) took {once * 1e3:.0f} ms"
        mine = _seconds(lambda: kata.rms_norm(x, weight))
    except (Exception, pytest.fail.Exception) as e:
        return f"not measured: rms_norm raised {type(e).__name__} on bf16 ({m}, {n})"
    ok = (
        torch.is_tensor(out)
        and out.shape == x.shape
        and torch.allclose(out.float(), expected(x, weight).float(), rtol=2e-2, atol=2e-2)
    )
    t_copy = _seconds(lambda: copy.copy_(x))
    t_torch = _seconds(lambda: F.rms_norm(x, (n,), weight, 1e-6))
    note = "" if ok else " (but its output is wrong on this input: see the checks above)"
    return (
        f"bf16 ({m}, {n}): your kernel {moved / mine / 1e12:.2f} TB/s, {t_copy / mine:.0%} of a "
        f"copy of the same bytes ({moved / t_copy / 1e12:.2f} TB/s); F.rms_norm "
        f"{moved / t_torch / 1e12:.2f} TB/s, {t_copy / t_torch:.0%}{note}"
    )


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your rms_norm and F.rms_norm, forward only (the kata has no backward).
    On the CPU the kernel runs in Triton's interpreter, which says nothing about its speed."""
    setting = triton_engine.perf_setting(
        device,
        "A Triton kernel reaches a copy's speed when it reads x once and writes y once: the "
        "whole row in registers (one block, or two loops over blocks), enough warps for wide "
        "rows (num_warps = min(max(BLOCK // 256, 1), 8)), and no torch op on x outside it. "
        "The bandwidth check (-- --device cuda) compares it with a copy of the same bytes.",
    )
    x, weight = make(setting.shape, setting.dtype, device=device)
    return PerfCase(
        given=f"rms_norm on x {shape_of(x)}{setting.where}", mine=lambda: kata.rms_norm(x, weight),
        builtin=lambda: F.rms_norm(x, (x.shape[-1],), weight, 1e-6), builtin_name="F.rms_norm",
        bytes_moved=2 * x.nbytes, note=setting.note,
    )  # fmt: skip
