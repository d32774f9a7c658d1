"""Hidden checks for the Triton LayerNorm kata: forward and backward kernels, run for real.

Where the kernels run, and how the engine is proven: as for triton-rmsnorm (see
tests/test_triton_rmsnorm.py and norm_katas/checks/triton_engine/): compiled with `--device
cuda` on a GPU, in Triton's interpreter everywhere else, after a probe of the engine; a check
whose call ran an operation the engine gets wrong (bfloat16 arithmetic, interpreted) is skipped
with a note, never failed. The interpreter runs one program at a time, so the row counts are
small, and chosen not to be multiples of any power-of-two block (1, 33 = 32 + 1): a
reduction that forgets its tail block shows, and a second pass in blocks of up to 32 partial
rows takes two steps. One is not small: 267 = 256 + 11 rows, at N = 32 to keep it cheap, so
that rows share partial rows past any GROUP up to 266 (the tutorial's is 256 for N <= 1024)
and a persistent grid takes more than one pass.

Where the expected values come from: autograd through F.layer_norm in float64 on the same
inputs, rounded to the dtype checked.

How every call is overseen (run(): LayerNormFunction.forward, then .backward, called directly
as the autograd engine would, on fenced copies of x, weight, bias and dy): every load and store
checked by address (interpreted), torch work on the activations (x, dy, what forward and
backward allocate, so the partial sums too) failed, and, interpreted, every element two
programs of one launch share without an atomic or a lock reported as a race. Each belongs to
the check named for it (test_masked_tail, test_kernels_do_the_work, test_reduction_race_free).

Properties × modes (interpreted on the CPU / compiled on a GPU):

    property                                   CPU (interpreter)      GPU (compiled)
    values: y, dx, dweight, dbias              checked                checked
    mean and rstd saved, float32, per row      checked                checked
    loads and stores inside their tensors      every access           stores past new tensors
    no torch work on activations               checked                checked
    every row in the sums (M = 1, 33, 267)     checked                checked
    no race in the reduction (M = 260)         every shared element   not seen (values only)
    bfloat16 values                            skipped (engine)       checked
    bandwidth (--perf)                         not meaningful         fwd+bwd vs F.layer_norm
"""

import math
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

from norm_katas.checks import (
    PerfCase,
    Suite,
    call_backward,
    call_forward,
    dtype_name,
    expect_backward_shapes,
    expect_close,
    expect_like,
    expect_tensor,
    expect_through_function,
    fail,
    fail_for,
    shape_of,
    triton_engine,
)
from norm_katas.checks.triton_engine import HALF, Call, Oversight, expect_input_kept, expect_kept

# Interpreted, the checks take most of a second of CPU time: two processes share them
# (shards); without a GPU, the kernels run in that interpreter (no_device_note).
SUITE = Suite(
    shards=2,
    no_device_note=triton_engine.no_device_note("--perf's bandwidth", "kernels", races=True),
    device_note=triton_engine.on_gpu(
        "Compiled on the GPU, the kernels' memory accesses cannot be watched: a read past the "
        "end of a tensor, and programs racing on dweight or dbias (which the interpreter "
        "finds), go unseen unless the values come out wrong. Grade on the CPU too."
    ),
)
engine = triton_engine.engine  # autouse: Triton set up and proven before the learner's file


# -- the checks -------------------------------------------------------------------------------


@triton_engine.first_check  # a minute, not 10 s: it sets the engine up too
def test_kernels_do_the_work(kata, device):
    """your Triton kernels do the work, forward and backward: torch only allocates and makes views

    The kernels exist to read each activation once: any torch operation on x, dy or what the
    kernels write (a copy, a cast, a mean, the final sum of partial dweight rows, autograd
    re-running forward inside backward) is another
    pass through memory, or means a kernel is not used at all. Every check's call is watched
    for it; this one is named for it.

    Outside the kernels only allocation and views: outputs, mean and rstd, the partial
    buffers, and x and dy viewed as rows of N. The final sum over partial rows is a second,
    small kernel.
    """
    for shape in ((2, 64), (2, 2, 64)):
        x, weight, bias, dy = make(shape, device=device)
        both(kata, x, weight, bias, dy, given=described(x))  # fails on torch work, no launch
    # Strided x and dy, as autograd may hand them: a .contiguous() to avoid the strides is a copy.
    x, weight, bias, dy = make((2, 64), device=device)
    x, dy = F.pad(x, (0, 64))[:, :64], dy.t().contiguous().t()
    both(kata, x, weight, bias, dy, given=f"{described(x)} (rows 128 apart) and dy transposed")


def test_gradient_shapes(kata, device):
    """forward returns y like x; backward returns dx like x, dweight and dbias like the weight

    A drop-in for F.layer_norm over the last dimension: the kernels see rows, the caller gets
    back the shapes it passed, and backward gives one gradient per input of forward.

    y and dx in x's shape and dtype, dweight and dbias in the weight's, and None for eps,
    which takes no gradient.
    """
    x, weight, bias, dy = make((2, 3, 64), device=device)
    given = described(x)
    call, grads = both(kata, x, weight, bias, dy, given=given)
    expect_like(call.out, x, given=given, what="y")  # its values are the formula checks'
    names = ("dx", "dweight", "dbias", "the None for eps")
    expect_backward_shapes(grads, (x, weight, bias, EPS), names=names, given=given)


def test_masked_tail(kata, device):
    """every load and store stays inside its tensor (here on rows ending mid-block: N = 100, 1000)

    A block of 128 covers a row of 100 with 28 lanes to spare. Without a mask those lanes read
    the next row, and past the end of x, dy, the weight and the bias; and store past the ends
    of y, dx and the partial buffers. On a GPU that is garbage or an illegal memory access.
    Every check's call is watched for it; this one is named for it.

    Lane i of a block is real only when i < N: every load and store uses that mask, and spare
    lanes load as 0.
    """
    # 7 rows too: a program that takes several rows (a persistent grid of up to 6, 2-row tiles)
    # meets rows past M in its last round.
    for shape in ((2, 100), (1, 1000), (7, 100)):
        x, weight, bias, dy = make(shape, device=device)
        given = f"{described(x)} (N = {shape[-1]}, not a power of two)"
        both(kata, x, weight, bias, dy, given=given)  # fails on any access outside the tensors


def test_input_unmodified(kata, device):
    """the input x is left as it was: y goes into a tensor of its own

    The caller still owns x (a residual stream that is added back after the norm), and
    backward needs it: a forward that stores y over x to save an allocation hands the caller y
    where x was, and autograd's version counter does not see a Triton store. The checks of
    backward fold under this one when forward wrote into x.

    Allocate y as a new empty tensor of x's shape, dtype and device, and store into it; x is
    only loaded, never stored to.
    """
    x, weight, bias, _ = make((4, 64), device=device)
    given = described(x)
    call, _ = forward(kata, x, weight, bias, given=given)
    expect_input_kept(call, x, given=given)


def test_forward_formula(kata, device):
    """float32 rows match F.layer_norm: y = (x − mean) / sqrt(var + eps) · weight + bias

    Each row is centred on its mean, divided by its standard deviation (the biased variance,
    eps inside the square root), then scaled and shifted feature by feature. x may be a slice
    of a wider tensor, its rows further apart than N.

    Per row: μ = (1/N) Σ x, σ² = (1/N) Σ (x − μ)², rstd = 1/√(σ² + ε), y = (x − μ) · rstd · w + b,
    with N the real width, not the block's; row i of x starts i times x's row stride in, and
    row i of y i times y's.
    """
    for shape, eps, scale in (((4, 64), EPS, 2.0), ((3, 100), 0.1, 0.1)):
        x, weight, bias, _ = make(shape, device=device, scale=scale, shift=3 * scale)
        given = described(x, eps)
        if shape[-1] == 100:
            x = F.pad(x, (0, 28))[:, :100]  # the first 100 columns of 128: rows 128 apart
            given += f" (rows {x.stride(0)} apart: a slice of a wider tensor)"
        call, _ = forward(kata, x, weight, bias, given=given, eps=eps)
        want = F.layer_norm(x, (shape[-1],), weight, bias, eps)
        LAYER_NORM.expect_values(call, want, given=given, what="y")


def test_saves_mean_and_rstd(kata, device):
    """forward saves each row's mean and rstd in float32, for any input dtype

    Backward needs x̂ = (x − μ) · rstd. Saving μ and rstd (two numbers per row) lets it
    recompute x̂ from x instead of redoing the reductions; float32, because rstd rounded to
    float16 or bfloat16 is off by up to 1/2000 or 1/256 in every gradient.

    forward writes μ and rstd from its kernel into two float32 tensors of M elements (M rows)
    and saves them with ctx.save_for_backward, beside x and the weight.
    """
    # eps 0.5 on rows of variance 0.25: an rstd saved without eps is off by a factor of √3.
    for dtype, eps, scale in ((torch.float32, EPS, 2.0), (torch.float16, 0.5, 0.5)):
        x, weight, bias, _ = make((2, 3, 64), dtype, device=device, scale=scale, shift=1.0)
        given = described(x, eps)
        _, ctx = forward(kata, x, weight, bias, given=given, eps=eps)
        rows = x.numel() // x.shape[-1]
        x64 = x.double().reshape(rows, -1)
        mean = x64.mean(-1)
        rstd = (x64.var(-1, unbiased=False) + eps).rsqrt()
        saved = _saved_row_tensors(ctx, rows)
        for what, want in (("mean μ", mean), ("rstd = 1/√(σ² + ε)", rstd)):
            found = [(k, t) for k, t in saved if torch.allclose(t.double(), want, rtol=1e-2)]
            if not found and saved and not right_on(kata, x, weight, bias, eps):
                fail_for(  # one per row was saved, and forward's values are off too
                    "test_forward_formula",
                    f"{given}: forward saved {len(saved)} tensor(s) of {rows} values, none of "
                    f"them each row's {what}, and y is wrong too: see the forward's formula.",
                )
            if not found:
                fail(
                    f"{given}: forward saved no tensor of {rows} values (one per row) holding "
                    f"each row's {what}. Save μ and rstd, written by the forward kernel, with "
                    "ctx.save_for_backward: backward reads them instead of recomputing."
                )
            name, t = found[0]
            if t.dtype != torch.float32:
                fail(
                    f"{given}: forward saved each row's {what} ({name}) in {dtype_name(t.dtype)}"
                    ", not float32. Allocate it in float32 whatever x's dtype: the kernel "
                    "computes it in float32, and rounding it costs every gradient precision."
                )


def test_grad_x_through_the_mean(kata, device):
    """dx is zero when dy · weight is constant along each row: the gradient through the mean

    Adding a constant to a row moves its mean by the same constant and leaves y unchanged; a
    gradient that is constant along the row pushes every x the same way, so it must vanish.
    Without the mean term dx is rstd · g instead.

    With g = dy · w: dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)), means over the row.
    """
    x, weight, bias, _ = make((4, 64), device=device, scale=2.0)
    per_row = torch.randn(4, 1, device=device)
    dy = (per_row / weight).contiguous()
    given = f"{described(x)} with dy · weight constant along each row"
    call, grads = both(kata, x, weight, bias, dy, given=given)
    expect_values(call, grads, expected(x, weight, bias, dy), given=given, only=("dx",))


def test_grad_x_through_the_variance(kata, device):
    """dx is zero when dy · weight is x̂ scaled row by row: the gradient through the variance

    Scaling a row about its mean leaves y unchanged, so a gradient along x̂ must vanish.
    Without the variance term dx is rstd · (g − mean(g)) instead.

    dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)), with g = dy · w and the means the row's own;
    here g = c · x̂ in a row, mean(g) = 0 and mean(g · x̂) ≈ c.
    """
    x, weight, bias, _ = make((4, 64), device=device, scale=2.0)
    x_hat = F.layer_norm(x, (64,), None, None, EPS)
    # A factor of its own per row: a mean(g · x̂) taken over every row would cancel one for all.
    factor = torch.randn(4, 1, device=device) + 2
    dy = (x_hat * factor / weight).contiguous()
    given = f"{described(x)} with dy · weight equal to x̂ times a factor constant along each row"
    call, grads = both(kata, x, weight, bias, dy, given=given)
    expect_values(call, grads, expected(x, weight, bias, dy), given=given, only=("dx",))


def test_grad_x(kata, device):
    """float32 dx matches autograd through F.layer_norm, for any eps and dy, transposed or expanded

    dx carries three terms: dy through the affine step, and back through each row's mean
    and variance. Autograd hands backward dy as the next layer made it: transposed, or
    expanded (a loss that sums y gives a dy of ones, every stride 0), not always contiguous.

    dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)) with g = dy · w and x̂ = (x − μ) · rstd;
    dy's element j of row i lies at i times its row stride plus j times its column stride.
    """
    # eps 0.1 on rows of variance 4: a backward without eps in rstd is off by 1%.
    cases = (((3, 100), 0.1, ""), ((2, 64), EPS, "t"), ((2, 64), EPS, "sum"))
    for shape, eps, dy_is in cases:
        x, weight, bias, dy = make(shape, device=device, scale=2.0, shift=1.0)
        given = described(x, eps)
        if dy_is == "t":
            x = F.pad(x, (0, 64))[:, :64]  # and x a slice of a wider tensor: rows 128 apart
            dy = dy.t().contiguous().t()  # same values, column stride 2
            given += f" (rows {x.stride(0)} apart) and dy transposed (strides {dy.stride()})"
        elif dy_is == "sum":
            dy = torch.ones((), device=device).expand(shape)  # what y.sum().backward() hands in
            given += f" and dy of y.sum(): ones, expanded (strides {dy.stride()})"
        call, grads = both(kata, x, weight, bias, dy, given=given, eps=eps)
        want = expected(x, weight, bias, dy, eps)
        expect_values(call, grads, want, given=given, only=("dx",))


def test_grad_weight_and_bias(kata, device):
    """dweight and dbias sum over every row, the leading dims' too, feature by feature

    Each feature's weight scales that feature in every row: its gradient collects dy · x̂
    of that feature from all rows (batch and sequence), and the bias's collects dy. The sum
    runs down the rows, not along a row.

    dweight_j = Σ_rows dy_j · x̂_j and dbias_j = Σ_rows dy_j, one value per feature j.
    """
    # 16 rows: a whole number of any block up to 16, so that a reduction dropping a partial
    # block fails the next check, named for it, rather than this one.
    x, weight, bias, dy = make((2, 8, 64), device=device, scale=2.0, shift=1.0)
    given = described(x)
    call, grads = both(kata, x, weight, bias, dy, given=given)
    expect_values(
        call, grads, expected(x, weight, bias, dy), given=given, only=("dweight", "dbias")
    )


def test_reduction_keeps_every_row(kata, device):
    """dweight and dbias count every row once, for M = 1, 33 and 267 (between multiples of a block)

    A reduction in blocks of rows (programs of several rows, or a second pass over partial
    rows in steps of BLOCK) ends in a block that is only partly full: a loop or a grid
    rounded down drops those rows. Past the number of partial rows (256 in Triton's tutorial
    for N up to 1024) rows share them: each row's share is added to what the others left
    there, never written over it.

    Step over the rows (or partial rows) with ceil(M / BLOCK) blocks, masking rows ≥ M in the
    last one, so that every row adds to the sums exactly once; a partial row shared by the
    rows r ≡ g (mod G) ends holding the sum of all their dy · x̂, starting from zeros.
    """
    # 267 = 256 + 11 rows at a narrow N that fills its block (spare lanes are the width
    # checks' to judge): rows share partial rows past any GROUP up to 266.
    for shape in ((1, 64), (33, 64), (267, 32)):
        x, weight, bias, dy = make(shape, device=device, scale=2.0, shift=1.0)
        given = f"{described(x)} ({shape[0]} row{'s' if shape[0] > 1 else ''})"
        call, grads = both(kata, x, weight, bias, dy, given=given)
        want = expected(x, weight, bias, dy)
        expect_values(call, grads, want, given=given, only=("dx", "dweight", "dbias"))


def test_reduction_race_free(kata, device):
    """programs never update the same element at once: partial rows, an atomic or a lock

    On a GPU the programs run at the same time: a plain load, add and store into an element
    that another program also updates loses one of the updates. Triton's interpreter runs
    the programs one after another, so the values come out right there: the grader watches
    which program touches which element instead. Every check's call is watched for it; this
    one is named for it, and adds 260 rows: rows share a partial row only past the number of
    partial rows, 256 in Triton's tutorial for N up to 1024 (interpreted, only some programs
    of each launch run: two of them P apart for every P up to 16, and for 32, 64, 96, 128 and
    256), and the first program to take each lock finds it held, as it can on a GPU. Compiled
    on a GPU this cannot be watched; only wrong values show, on 17 and 260 rows.

    Either each program owns its partial row (a (P, N) buffer, row p for program p) and a
    second kernel sums the P rows, or the read-modify-write is atomic (tl.atomic_add) or
    made under a lock (tl.atomic_cas to take it, asked again until it succeeds; tl.atomic_xchg
    to release).
    """
    if triton_engine.INTERPRETED:  # some programs of each launch: races only, not values
        x, weight, bias, dy = make((RACE_ROWS, 64), device=device, scale=2.0, shift=1.0)
        given = (
            f"{described(x)} ({RACE_ROWS} rows; only programs {SAMPLED_NAMES} of each launch run)"
        )
        both(kata, x, weight, bias, dy, given=given, programs=SAMPLED)
        return
    for rows in (17, RACE_ROWS):  # compiled, a race shows only as lost updates: in the values
        x, weight, bias, dy = make((rows, 64), device=device, scale=2.0, shift=1.0)
        given = f"{described(x)} ({rows} rows)"
        call, grads = both(kata, x, weight, bias, dy, given=given)
        want = expected(x, weight, bias, dy)
        expect_values(call, grads, want, given=given, only=("dweight", "dbias"))


@pytest.mark.parametrize("dtype", HALF, ids=dtype_name)
def test_half_precision(kata, device, dtype):
    """float16 and bfloat16 inputs give y and gradients in that dtype, within its tolerance

    Half precision in, half precision out: y and dx in x's dtype, dweight and dbias in the
    weight's. Only the arithmetic inside the kernels is float32.

    Allocate y and dx like x and dweight and dbias like the weight; compute in float32 and
    round once, at the store.
    """
    # Rows far from 0: a sum of the row in half precision loses the mean's digits.
    x, weight, bias, dy = make((2, 100), dtype, device=device, scale=2.0, shift=8.0)
    given = described(x)
    call, grads = both(kata, x, weight, bias, dy, given=given)
    expect_values(call, grads, expected(x, weight, bias, dy), given=given)


def test_wide_rows(kata, device):
    """rows wider than a fixed block (N = 5000) are normalized and differentiated in full

    A row of 5000 elements does not fit a block of 1024 or 4096 fixed in advance: either the
    block follows N, or each program walks its row block by block.

    Either the block is the next power of two at or above N (one block per row, up to 8192),
    in forward and in backward, or a fixed block walks the row in steps: passes for the row's
    sums (the mean and the variance forward, the means of g and g · x̂ backward), then one more
    to write y or dx.
    """
    x, weight, bias, dy = make((2, 5000), device=device)
    given = described(x)
    call, grads = both(kata, x, weight, bias, dy, given=given)
    expect_values(call, grads, expected(x, weight, bias, dy), given=given)


@pytest.mark.parity
def test_module_like_nn_layernorm(kata, device):
    """LayerNorm(N) works as nn.LayerNorm: parameters, state_dict, and gradients through autograd

    The module holds a weight of ones and a bias of zeros, its normalized_shape as a tuple (N,)
    and its eps (1e-5 by default, as layer_norm's), as nn.LayerNorm does, and its forward goes
    through LayerNormFunction.apply, so that autograd calls your backward.

    layer_norm applies LayerNormFunction to x, the weight, the bias and eps; the module's
    forward calls it with its own parameters and eps; backward leaves dy as it was handed.
    """
    x, weight, bias, dy = make((2, 3, 64), device=device)
    # Every call first overseen: the calls below (the wrapper, the module, through autograd)
    # run the same kernels on the same shapes unwatched, which is safe only once these stayed
    # inside their tensors (interpreted, a store goes through its raw address).
    both(kata, x, weight, bias, dy, given=f"{described(x)}, backward(dy)")
    small = x * 1e-3  # a variance of 1e-6: eps = 1e-5 shows in every output
    given = f"layer_norm(x, weight, bias) on x {shape_of(x)} · 1e-3, eps left to its default"
    want = F.layer_norm(small, (64,), weight, bias, EPS)
    expect_close(kata.layer_norm(small, weight, bias).detach(), want, given=given)
    expect_through_function(
        kata.LayerNormFunction,
        "LayerNormFunction",
        lambda: kata.layer_norm(x, weight.requires_grad_(), bias.requires_grad_()),
        caller="layer_norm",
    )
    mine = kata.LayerNorm(64).to(device)
    theirs = torch.nn.LayerNorm(64).to(device)
    given = "LayerNorm(64)"
    for name in ("normalized_shape", "eps"):
        if getattr(mine, name, None) != getattr(theirs, name):
            got, want = getattr(mine, name, None), getattr(theirs, name)
            fail(f"{given}: .{name} is {got!r}, expected {want!r}, as nn.LayerNorm(64) has.")
    if set(mine.state_dict()) != set(theirs.state_dict()):
        fail(f"{given}: state_dict keys {sorted(mine.state_dict())}, expected weight and bias.")
    theirs.load_state_dict(mine.state_dict())
    for name in ("weight", "bias"):
        expect_close(getattr(mine, name), getattr(theirs, name), given=given, what=name)
    with torch.no_grad():
        for layer in (mine, theirs):
            layer.weight.copy_(weight)
            layer.bias.copy_(bias)
    xs = [x.clone().requires_grad_() for _ in range(2)]
    outs = [layer(v) for layer, v in zip((mine, theirs), xs, strict=True)]
    given = f"LayerNorm(64) on x {shape_of(x)}, y.backward(dy)"
    expect_close(outs[0], outs[1].detach(), given=given)
    handed = [dy.clone() for _ in outs]  # each its own: a backward may write into its dy
    for out, grad in zip(outs, handed, strict=True):
        out.backward(grad)
    if not torch.equal(handed[0], dy):
        fail(
            f"{given}: your backward changed dy, the caller's tensor (autograd may hand the same "
            "one to other layers). Write dx into a tensor of its own."
        )
    expect_close(xs[0].grad, xs[1].grad, given=given, what="x.grad")
    for name in ("weight", "bias"):
        got, want = getattr(mine, name).grad, getattr(theirs, name).grad
        expect_close(got, want, given=given, what=f"{name}.grad")


# -- how the checks call LayerNormFunction, and what they expect ------------------------------

LAYER_NORM = Oversight(
    function="LayerNormFunction",
    inputs=(("x", math.nan), ("the weight", 2.0), ("the bias", 2.0), ("dy", math.nan)),
    activations=(0, 3),
    views=triton_engine.VIEWS | triton_engine.SPLITS_AND_FILLS,
    in_bounds="test_masked_tail",
    does_the_work="test_kernels_do_the_work",
    race_free="test_reduction_race_free",
    kernels="the kernels",
    stray_advice="Mask every tl.load and tl.store (mask = cols < N, and rows < P in the second "
    "pass), the weight's and the bias's too, and move each pointer only within its own tensor: "
    "each tensor's rows by its own stride (x's rows may lie further apart than y's, dy's and "
    "dx's), the weight and the bias not at all.",
    overrun_advice="Mask every store, offset each tensor's rows by its own stride, and launch "
    "no more programs than there are rows (or partial rows, or column blocks).",
    copy_advice="Let the kernels read x and dy where they are, in their own dtype: pass the row "
    "strides (and dy's column stride: autograd may hand a transposed or expanded dy) and cast "
    "after tl.load.",
    work_advice="do the arithmetic and the casts in the kernels, the sum of the partial rows "
    "of dweight and dbias too (a second kernel); torch should only allocate and reshape.",
    launch_advice="Launch yours with kernel[grid](...): forward one program per row, backward a "
    "kernel for dx and the partial sums and one for the final sums.",
    unwritten_advice="Does every row get a program, and does each program cover all N columns?",
    race_advice="Give each program a partial row of its own (then sum the partial rows in a "
    "second kernel), or take a lock around the load, add and store (tl.atomic_cas / "
    "tl.atomic_xchg, as Triton's tutorial does), or use tl.atomic_add.",
)
FORWARD = replace(LAYER_NORM, inputs=LAYER_NORM.inputs[:3], activations=(0,))
EPS = 1e-5
# Races among many rows, interpreted: every program of a launch would cost a millisecond or
# more, so only some run, chosen so that for every count P of partial rows up to 16, and for
# 32, 64, 96, 128 and 256 (Triton's tutorial's GROUP_SIZE_M), two of them are P apart: any
# two programs p and p + P share the partial row p % P. Past 256 rows, the most that the
# tutorial gives N <= 1024. (The checks before this one run every program of 16, 33 and 267
# rows, watched for races too.)
RACE_ROWS = 260
SAMPLED = frozenset({0, 1, 2, 3, 4, 8, 12, 16, 32, 64, 96, 128, 256})
SAMPLED_NAMES = "0-4, " + ", ".join(str(p) for p in sorted(SAMPLED) if p > 4)


def make(shape, dtype=torch.float32, *, device, scale=1.0, shift=0.0):
    """x (randn * scale + shift), a weight and a bias for its last dim, and a dy like x."""
    n = shape[-1]
    x = (torch.randn(shape, device=device) * scale + shift).to(dtype)
    weight = (torch.randn(n, device=device) * 0.5 + 1.0).to(dtype)
    bias = torch.randn(n, device=device).to(dtype)
    dy = torch.randn(shape, device=device).to(dtype)
    return x, weight, bias, dy


def described(x, eps=EPS):
    extra = "" if eps == EPS else f", eps={eps:g}"
    return f"LayerNormFunction on x {shape_of(x)}{extra}"


def forward(kata, x, weight, bias, *, given, eps=EPS) -> tuple[Call, object]:
    """forward alone, overseen: (the call, out = y; the ctx it saved into)."""
    saved = []

    def call(x, weight, bias):
        y, ctx = call_forward(kata.LayerNormFunction, x, weight, bias, eps)
        saved.append(ctx)
        return y

    out = FORWARD.run(kata, x, weight, bias, given=given, call=call)
    return out, saved[0]


def both(kata, x, weight, bias, dy, *, given, eps=EPS, programs=None) -> tuple[Call, tuple]:
    """forward then backward, overseen: (the call, out = y; (dx, dweight, dbias, ...)).
    programs: run only those of each launch (interpreted), for the races alone."""
    grads, handed = [], x

    def call(x, weight, bias, dy):
        y, ctx = call_forward(kata.LayerNormFunction, x, weight, bias, eps)
        expect_tensor(y, "forward")
        # x written over: backward works from the wrong x, test_input_unmodified's mistake.
        expect_kept(x, handed, given=given, owner="test_input_unmodified")
        grads.append(call_backward(kata.LayerNormFunction, ctx, dy, given=given))
        return y

    out = LAYER_NORM.run(kata, x, weight, bias, dy, given=given, call=call, programs=programs)
    return out, grads[0]


def expected(x, weight, bias, dy, eps=EPS):
    """Autograd through F.layer_norm in float64, rounded to each input's dtype: y, dx, dw, db."""
    leaves = [t.detach().double().requires_grad_() for t in (x, weight, bias)]
    y = F.layer_norm(leaves[0], (x.shape[-1],), leaves[1], leaves[2], eps)
    y.backward(dy.double())
    return (
        y.detach().to(x.dtype),
        leaves[0].grad.to(x.dtype),
        leaves[1].grad.to(weight.dtype),
        leaves[2].grad.to(bias.dtype),
    )


NAMES = ("y", "dx", "dweight", "dbias")


def expect_values(call: Call, grads, want, *, given, only=NAMES):
    """Each of `only` matches want, every element written; skipped on an engine fault."""
    got = dict(zip(NAMES, (call.out, *tuple(grads)[:3]), strict=True))
    for name, value in zip(NAMES, want, strict=True):
        if name in only:
            rtol = 2e-3 if value.dtype == torch.float16 else None
            call_of = replace(call, out=got[name])
            LAYER_NORM.expect_values(call_of, value, given=given, rtol=rtol, what=name)


def right_on(kata, x, weight, bias, eps) -> bool:
    """Whether forward gets y right on these inputs: the premise a check compares with."""

    def forward_right() -> None:
        call, _ = forward(kata, x, weight, bias, given="", eps=eps)
        want = F.layer_norm(x.float(), (x.shape[-1],), weight.float(), bias.float(), eps)
        LAYER_NORM.expect_values(call, want.to(x.dtype), given="", what="y")

    return triton_engine.passes(forward_right)


def _saved_row_tensors(ctx, rows: int) -> list[tuple[str, torch.Tensor]]:
    return [(k, t) for k, t in ctx.saved().items() if t.numel() == rows and t.dim() <= 2]


# -- on a GPU: --perf -------------------------------------------------------------------------


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your layer_norm and F.layer_norm, forward and backward.
    On the CPU the kernels run in Triton's interpreter, which says nothing about their speed."""
    setting = triton_engine.perf_setting(
        device,
        "Forward reads x and writes y; backward reads x and dy and writes dx (the partial "
        "sums of dweight and dbias are small): a fused pair reaches a copy's speed with the "
        "whole row in registers and enough warps (num_warps = min(max(BLOCK // 256, 1), 8)), "
        "and enough partial rows to fill every SM.",
        "kernels",
    )
    x, weight, bias, _ = make(setting.shape, setting.dtype, device=device)
    x, weight, bias = (t.requires_grad_() for t in (x, weight, bias))
    return PerfCase(
        given=f"layer_norm on x {shape_of(x)}{setting.where}",
        mine=lambda: kata.layer_norm(x, weight, bias, EPS),
        builtin=lambda: F.layer_norm(x, (x.shape[-1],), weight, bias, EPS),
        builtin_name="F.layer_norm", inputs=(x, weight, bias),
        bytes_moved=2 * x.nbytes, note=setting.note,
    )  # fmt: skip
