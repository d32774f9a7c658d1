"""Hidden checks for the Triton softmax kata: online forward and backward kernels, run for real.

Where the kernels run, and how the engine is proven: as for triton-rmsnorm (see
tests/test_triton_rmsnorm.py and norm_katas/checks/triton_engine/): compiled with `--device
cuda` on a GPU, in Triton's interpreter everywhere else, after a probe of the engine (exp,
tl.max and tl.maximum among what it proves); a check whose call ran an operation the engine
gets wrong (bfloat16 arithmetic, interpreted) is skipped with a note, never failed.

The interpreter runs one program at a time, each step of a kernel's loop costing tens of
microseconds, so the inputs are few rows, mostly of 64 to 1000 columns. Two kinds are not
small. Rows of 70001 columns: wider than 65536, the widest block the contract allows (Liger-
Kernel's single-block limit), so that every kernel must loop and the running sum must be
rescaled at least once; 70001 is odd, so that no block divides it. And 133 rows, at N = 32 and
forward only, past one pass of a persistent grid of one program per SM on an H100 (132): the
Triton norm suites take 267 rows, but a softmax program walks its row twice, and 267 of them
would take about half the checks' time.

The contract's design choice, the online forward, is graded on what the kernels do to memory,
which the interpreter watches (Call.traffic): each element of x read at most twice (the online
statistics, then the output; the textbook max, sum and output passes read it three times), and
no load or store wider than 65536 lanes (one block sized to a row of 70001 takes 131072).
Triton's tutorial 02 (one block per row, one read of x) passes the first and fails the second:
fine for narrow rows, not for a row wider than one block. Compiled on a GPU neither can be
seen: the read count skips there, and the width goes unjudged (only the values of wide rows).

Where the expected values come from: torch.softmax in float64, rounded to x's dtype. For dx,
y · (dy − Σ dy · y) in float64 from the y the learner's forward returned (the y their backward
reads): torch's own backward also starts from the rounded output, and a mistake in forward
then stays forward's, not backward's too.

How every call is overseen (run(): SoftmaxFunction.forward, then .backward, called directly as
the autograd engine would, on fenced copies of x and dy): every load and store checked by
address (interpreted), and torch work on x, dy, or what the kernels write failed. Each belongs
to the check named for it (test_masked_tail, test_kernels_do_the_work).

Checks of one property on unusual rows (logits near +500 or −1000, rows of 70001 that rise
along their length) call the kernel on rows where that property cannot matter before they say
what is wrong (the same rows near 0, ordinary rows of 64 and 100, a wide row whose max comes
first): where those come out wrong too, the mistake is another check's (fail_for), and the
report ranks it there.

Properties × modes (interpreted on the CPU / compiled on a GPU):

    property                                   CPU (interpreter)      GPU (compiled)
    values: y, dx                              checked                checked
    y saved for backward                       checked                checked
    loads and stores inside their tensors      every access           stores past new tensors
    no torch work on activations               checked                checked
    x read at most twice (online)              counted                skipped
    blocks of at most 65536 lanes              every access           not seen
    bfloat16 values                            checked (1)            checked
    bandwidth (--perf)                         not meaningful         fwd+bwd vs torch.softmax

(1) skipped where the kernel computes in bfloat16 itself (see the engine above).
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
    expect_node_of,
    expect_tensor,
    fail,
    fail_for,
    shape_of,
    triton_engine,
    values_close,
)
from norm_katas.checks.triton_engine import HALF, Call, Oversight, expect_input_kept

# Interpreted, the checks take most of a second of CPU time: two processes share them
# (shards); without a GPU, the kernels run in that interpreter (no_device_note).
SUITE = Suite(
    shards=2,
    no_device_note=triton_engine.no_device_note("--perf's bandwidth", "kernels"),
    device_note=triton_engine.on_gpu(
        "Compiled on the GPU, the kernels' memory accesses cannot be watched: a read past the "
        "end of a tensor, how many times x is read, and how wide a block is go unseen unless "
        "the values come out wrong. Grade on the CPU too."
    ),
)
engine = triton_engine.engine  # autouse: Triton set up and proven before the learner's file


# -- the checks -------------------------------------------------------------------------------


@triton_engine.first_check  # a minute, not 10 s: it sets the engine up too
def test_kernels_do_the_work(kata, device):
    """your Triton kernels do the work, forward and backward: torch only allocates and makes views

    The kernels exist to read each activation as few times as possible: any torch operation on
    x, dy or what the kernels write (a copy, a cast, an exp, a max or a sum, a fallback to
    torch.softmax) is another pass through memory, or means a kernel is not used at all. Every
    check's call is watched for it; this one is named for it.

    Outside the kernels only allocation and views: y and dx allocated empty, x and dy viewed as
    rows of N, y and dx viewed back in x's shape. The max, the exponentials, the sums and the
    casts all happen between a load and a store.
    """
    x, dy = make((2, 2, 64), device=device)
    both(kata, x, dy, given=described(x))  # fails on torch work, or no launch
    # Strided x and dy, as autograd may hand them: a .contiguous() to avoid the strides is a copy.
    x, dy = make((2, 64), device=device)
    x, dy = F.pad(x, (0, 64))[:, :64], dy.t().contiguous().t()
    both(kata, x, dy, given=f"{described(x)} (rows 128 apart) and dy transposed")


def test_input_unmodified(kata, device):
    """the input x is left as it was: y goes into a tensor of its own

    The caller still owns x (attention scores a mask was added to, kept for a second use, say).
    A forward that stores y over x to save an allocation hands the caller y where x was, and
    autograd's version counter does not see a Triton store. The other checks compare y with
    the x they handed over; this one looks at x after the call.

    Allocate y as a new empty tensor of x's shape, dtype and device, and store into it; x is
    only loaded, never stored to.
    """
    x, _ = make((4, 64), device=device)
    given = described(x)
    call, _ = forward(kata, x, given=given)
    expect_input_kept(call, x, given=given)


def test_gradient_shapes(kata, device):
    """forward returns y like x, and backward dx like x, for any number of leading dims

    A drop-in for torch.softmax over the last dimension: the kernels see rows, the caller gets
    back the shape and dtype it passed in, and backward gives one gradient, for x.

    Allocate y and dx as rows of N in x's dtype, and view them back in x's shape before
    returning them.
    """
    x, dy = make((2, 3, 64), device=device)
    given = described(x)
    call, grads = both(kata, x, dy, given=given)
    expect_like(call.out, x, given=given, what="y")
    expect_backward_shapes(grads, (x,), names=("dx",), given=given)
    expect_like(grads[0], x, given=given, what="dx")


def test_masked_tail(kata, device):
    """every load and store stays inside its tensor (here on rows ending mid-block: N = 100, 1000)

    A block of 128 covers a row of 100 with 28 lanes to spare. Without a mask those lanes read
    the next row, and in the last row past the end of x, y or dy; and store past the end of y
    and dx. On a GPU that is garbage or an illegal memory access, whatever the values read.
    Every check's call is watched for it; this one is named for it.

    Lane i of the block starting at column c is real only when c + i < N: every load and every
    store uses that mask.
    """
    # 7 rows too: a program that takes several rows (a persistent grid of up to 6, 2-row tiles)
    # meets rows past M in its last round.
    for shape in ((2, 100), (1, 1000), (7, 100)):
        x, dy = make(shape, device=device)
        given = f"{described(x)} (N = {shape[-1]}, not a power of two)"
        both(kata, x, dy, given=given)  # fails on any access outside the tensors


def test_reads_x_at_most_twice(kata, device):
    """the forward is online: each element of x is read at most twice (statistics, then output)

    The row's max and its sum of exponentials are found together, in one pass: whenever a
    block raises the max, the sum so far is rescaled to it. A second pass writes y. The
    textbook softmax takes a pass for the max, another for the sum and a third for the
    output: three reads of every element of x, in a kernel whose time is the bytes it moves.
    The grader counts, in Triton's interpreter, the loads that reach each element of x.

    With m the running max and s the running sum: m' = max(m, max of the block), then
    s' = s · exp(m − m') + Σ exp(x − m') over the block; y = exp(x − m) / s in the second pass.
    """
    x, _ = make((2, 5000), device=device)
    given = described(x)
    call, _ = forward(kata, x, given=given, traffic=True)
    if call.traffic is None:  # compiled: loads cannot be counted
        pytest.skip(
            "Compiled on the GPU, the kernel's loads cannot be counted: grade on the CPU "
            "(Triton's interpreter) to check how many times it reads x."
        )
    traffic = call.traffic_of("x")
    reads = traffic.most_reads if traffic else 0
    if reads > 2:
        row, col = divmod(int(traffic.reads.argmax()), x.stride(0))
        fail(
            f"{given}: the forward read x[{row}, {col}] (and others) {reads} times: that many "
            "loads reached it, each a read from memory. The online softmax reads each element "
            "twice: once in the pass that keeps the running max m and sum s (rescaling s by "
            "exp(m − m_new) whenever a block raises the max), once to write y. A pass of its "
            "own for the max, or a second load of the same block, reads x once more."
        )


def test_saves_output_for_backward(kata, device):
    """forward saves its output y for backward: dx comes from y and dy

    Softmax's gradient needs only its output: backward has y saved, and reads it with dy. Saving
    x instead means computing the softmax a second time in backward, another pass through x
    for its max and sum.

    Save y with ctx.save_for_backward (the rows of N the kernel wrote, or their view in x's
    shape); backward reads it and dy: dx = y · (dy − Σ dy · y).
    """
    x, _ = make((2, 3, 64), device=device)
    given = described(x)
    call, ctx = forward(kata, x, given=given)
    y = expect_tensor(call.out, "forward").detach()
    saved = list(ctx.saved().items())
    if any(t.numel() == y.numel() and same_values(t.reshape(y.shape), y) for _, t in saved):
        return
    what = ", ".join(f"{name} {shape_of(t)}" for name, t in saved) or "nothing"
    fail(
        f"{given}: forward saved {what}, but no tensor holding its output y. Save y with "
        "ctx.save_for_backward(y): backward computes dx = y · (dy − Σ dy · y) from it, "
        "without a second softmax of x."
    )


def test_max_subtracted(kata, device):
    """logits near +500 come out right: the row's max is subtracted before exp

    exp overflows float32 past 88.7: exp(500) is inf, and inf / inf is NaN. Softmax does not
    change when the same number is subtracted from every element of a row, so the kernel
    subtracts the row's max first: every exponent is then at most 0.

    y = exp(x − m) / Σ exp(x − m), with m the row's max (online: the running max, with the sum
    rescaled when it grows); exp(x − m) lies in (0, 1].
    """
    x, _ = make((4, 64), device=device)
    big = x * 2 + 500
    given = f"{described(big)}, x = randn · 2 + 500"
    call, _ = forward(kata, big, given=given)
    if not right(call, expected(big)):
        if not right_on(kata, x * 2):
            fail_for(
                "test_forward_formula",
                f"{given}: y is wrong, and so it is for the same rows without the + 500, "
                "where no exp can overflow: see the formula check.",
            )
        out = expect_tensor(call.out, "forward")
        fail(
            f"{given}: y holds {_summary(out)}, while the same rows without the + 500 come out "
            "right. exp overflows float32 past 88.7 (exp(500) is inf, and inf / inf is NaN) "
            "unless the row's max is subtracted first: y = exp(x − m) / Σ exp(x − m), every "
            "exponent at most 0."
        )
    # The whole row's max, not the last block's: a peak in the first block, 95 above the rest.
    peak = wide(1, device=device)
    peak[:, 0] = 100.0
    given = f"{described(peak)}, randn with its first element 100"
    call, _ = forward(kata, peak, given=given)
    # Wrong with its first element 8 too, where nothing overflows: the wide rows' mistake,
    # which leaves this property unmeasured here.
    if right(call, expected(peak)) or not right_on(kata, wide(1, device=device)):
        return
    out = expect_tensor(call.out, "forward")
    fail(
        f"{given}: y holds {_summary(out)}, while the same row with its first element 8 comes "
        "out right. The m subtracted must be the whole row's max: a running max, m = max(m, "
        "max of the block), never lowered by a later block whose values are smaller, or "
        "exp(100 − m) overflows float32."
    )


def test_negative_rows(kata, device):
    """rows far below 0 (x near −1000, N = 100) come out right: only the row's values make its max

    Softmax cannot tell −1000 + x from x. A kernel can: if anything that is not one of the
    row's values takes part in its max (a spare lane loaded as 0, a running max that starts at
    0), the max is 0 instead of about −1000, every exp(x − 0) underflows to 0, and y is 0 / 0.
    With −inf in the spare lanes they never win the max, and exp(−∞) adds nothing to the sum.

    Load the spare lanes (columns ≥ N) with −∞, start the running max at −∞, and let the
    running sum start at 0: m = max of the row's own values, s = Σ exp(x − m) over them alone.
    """
    x, _ = make((3, 100), device=device)
    low = x - 1000
    given = f"{described(low)}, x = randn − 1000"
    call, _ = forward(kata, low, given=given)
    if right(call, expected(low)):
        return
    ordinary(kata, given, x, device=device)  # wrong near 0 as well: another check's mistake
    if not right_on(kata, x + 500):
        fail_for(
            "test_max_subtracted",
            f"{given}: y is wrong, and so it is for the same rows near +500, where the spare "
            "lanes cannot win the max: is the row's max subtracted before exp?",
        )
    out = expect_tensor(call.out, "forward")
    fail(
        f"{given}: y is wrong (it holds {_summary(out)}), while the same rows near 0 and near "
        "+500 come out right. Something that is not one of the row's values became its max: "
        "a spare lane loaded as 0 (load them with other=-inf), or a running max that started "
        "at 0 (start it at -inf). Then every exp(x − 0) underflows to 0 here."
    )


def test_sum_rescaled_when_the_max_grows(kata, device):
    """a row whose max grows block after block (N = 70001) comes out right: the sum is rescaled

    The running sum s holds Σ exp(x − m) for the blocks so far, against the max m so far. When
    a block raises the max to m', every term already in s is too large by exp(m' − m): s must
    be multiplied by exp(m − m') before the new block's terms are added. A row that rises
    along its length raises the max in (nearly) every block; a row of 70001 takes two blocks
    at least, whatever the block (up to 65536).

    m' = max(m, max of the block), s' = s · exp(m − m') + Σ exp(x − m') over the block, m = m';
    after the last block, s = Σ exp(x − m) over the whole row.
    """
    x = ramp(1, device=device)
    given = f"{described(x)}, rising along the row (x = 60 · j / N + randn / 4)"
    call, _ = forward(kata, x, given=given)
    if right(call, expected(x)):
        return
    ordinary(kata, given, device=device)  # wrong on narrow rows too: another check's mistake
    steady = wide(1, device=device)
    if not right_on(kata, steady):
        fail_for(
            "test_wide_rows",
            f"{given}: y is wrong, and so it is for a row of 70001 whose max is its first "
            "element, where a running max taken along the row never grows: see the check of "
            "wide rows, which that row is.",
        )
    out = expect_tensor(call.out, "forward")
    want = expected(x)
    fail(
        f"{given}: y is wrong (its sum is {out.double().sum().item():.4g}, expected "
        f"{want.double().sum().item():.4g}), while a row of 70001 whose max is its first "
        "element comes out right. When a block raises the running max from m to m_new, the "
        "sum so far holds terms exp(x − m) that are too large by exp(m_new − m): multiply it "
        "by exp(m − m_new) before adding the block's Σ exp(x − m_new)."
    )


def test_grad_through_the_sum(kata, device):
    """dx is zero when dy is the same along each row: the Σ dy · y term

    Softmax's outputs sum to 1 whatever x is: a dy that pushes every output of a row up by
    the same amount asks for nothing that can change, so dx must vanish. Without the sum term
    dx would be y · dy instead.

    dx = y · (dy − Σ dy · y), with the sum along the row; for dy = c along a row, Σ dy · y = c
    and dx = 0.
    """
    x, _ = make((4, 64), device=device, scale=2.0)
    dy = torch.randn(4, 1, device=device).expand(4, 64).contiguous()
    given = f"{described(x)} with dy constant along each row"
    call, grads = both(kata, x, dy, given=given)
    dx, want = replace(call, out=grads[0]), expected_dx(call.out, dy)
    y = call.out
    if not right(dx, want) and isinstance(y, torch.Tensor) and values_close(grads[0], y * dy):
        fail(
            f"{given}: dx is y · dy (up to {grads[0].abs().max().item():.3g}), where it should be "
            "0: softmax's outputs sum to 1 whatever x is, so a dy that is the same along a row "
            "changes nothing. The Σ dy · y term is missing: dx = y · (dy − Σ dy · y)."
        )
    expect_values(dx, want, given=given, what="dx")


def test_wide_rows(kata, device):
    """rows wider than one block (N = 70001) are computed in full, in blocks of at most 65536

    A row of 70001 does not fit a block of 1024, 4096 or 65536 fixed in advance, and a block
    sized to the row (131072 lanes, tutorial 02's way) holds more values than an SM has
    registers (65536): on a GPU it spills to slow local memory, and past 2²⁰ lanes Triton
    refuses it. Each program walks its row block by block instead, forward and backward.

    Two passes of ⌈N / BLOCK⌉ steps each, with BLOCK at most 65536: forward the running max and
    sum, then y; backward Σ dy · y, then dx = y · (dy − Σ dy · y).
    """
    x = wide(1, device=device)
    dy = torch.randn(x.shape, device=device)
    given = f"{described(x)}, its max its first element"
    call, grads = both(kata, x, dy, given=given, traffic=True)
    if not right(call, expected(x)):
        ordinary(kata, given, device=device)  # wrong on narrow rows too: another check's mistake
        expect_values(call, expected(x), given=given, what="y")
    dx = replace(call, out=grads[0])
    if not right(dx, expected_dx(call.out, dy)):
        x_narrow, dy_narrow = make((2, 100), device=device)
        narrow, narrow_grads = both(kata, x_narrow, dy_narrow, given="")
        if not right(replace(narrow, out=narrow_grads[0]), expected_dx(narrow.out, dy_narrow)):
            fail_for(
                "test_backward_formula",
                f"{given}: dx is wrong, and so it is for rows of 100 (randn): see the check of "
                "backward's formula.",
            )
        expect_values(dx, expected_dx(call.out, dy), given=given, what="dx")
    widest = max(call.traffic or (), key=lambda t: t.widest, default=None)
    if widest is not None and widest.widest > MAX_LANES:
        kernel = widest.widest_kernel or "a kernel"
        verb = "loaded" if widest.widest_verb == "read" else "stored"
        fail(
            f"{given}: {kernel} {verb} {widest.widest} lanes of {widest.name} at once: one "
            f"block for the whole row. The values are right, but a block of {widest.widest} "
            f"lanes holds more values than an SM has registers ({MAX_LANES}): on a GPU it "
            "spills to local memory, and past 2²⁰ lanes Triton refuses to compile it. Walk the "
            f"row in blocks of at most {MAX_LANES} columns (min(next_power_of_2(N), BLOCK)), "
            "with the online max and sum."
        )


def test_race_free(kata, device):
    """programs never update the same element at once: one program a row, or a slot per block

    A row split across programs (a grid over rows and column blocks) has its max and sum (and
    backward its Σ dy · y) in pieces, one per program: merged into one buffer with plain loads
    and stores, the programs, which on a GPU run at the same time, lose each other's updates.
    Triton's interpreter runs them one after another, so the values come out right there: the
    grader watches which program touches which element instead. Every check's call is watched
    for it; this one is named for it. Compiled on a GPU this cannot be watched; only wrong
    values show.

    Either one program owns each row (walking it block by block, as the online algorithm
    does), or each program of a split row stores its block's max and sum in a slot of its own,
    and the next kernel combines the row's slots (each sum rescaled to the row's max).
    """
    # Wider than a fixed block of 4096 or 8192, and cheap in the interpreter: a kernel that
    # splits only rows past 65536 does so on test_wide_rows' row, which is watched as well.
    x, dy = make((1, 10000), device=device)
    given = described(x)
    call, grads = both(kata, x, dy, given=given)  # interpreted: a race fails the call itself
    if not triton_engine.INTERPRETED:  # compiled, a race shows only as lost updates
        expect_values(call, expected(x), given=given, what="y")
        dx = replace(call, out=grads[0])
        expect_values(dx, expected_dx(call.out, dy), given=given, what="dx")


def test_forward_formula(kata, device):
    """float32 rows match torch.softmax: y = exp(x − max) / Σ exp(x − max), along the last dim

    Each row of the last dimension becomes probabilities: positive, summing to 1, in the
    order of x. The rows are independent: one row's values never enter another's.

    Per row: m = max x, s = Σ exp(x − m), y = exp(x − m) / s, with the sum over the row's N
    elements (N = 64 here: one block).
    """
    for scale in (1.0, 4.0):
        x, _ = make((4, 64), device=device, scale=scale)
        given = described(x) if scale == 1.0 else f"{described(x)}, x = randn · {scale:g}"
        call, _ = forward(kata, x, given=given)
        expect_values(call, expected(x), given=given, what="y")


def test_non_power_of_two_width(kata, device):
    """rows of widths between powers of two (N = 100, 1000, 77) match torch.softmax

    The block has a power-of-two number of lanes; the row has N elements. The spare lanes of
    the last block are no part of the row: they add nothing to the max or to the sum, and
    every real column, the last block's included, is read and written.

    Over the N real columns only: m = max x, s = Σ exp(x − m); a spare lane loads as −∞, so
    that it never raises the max and exp(−∞) = 0 leaves the sum alone.
    """
    for shape in ((3, 100), (2, 1000), (3, 77)):
        x, _ = make(shape, device=device)
        given = f"{described(x)} (N = {shape[-1]}, not a power of two)"
        call, _ = forward(kata, x, given=given)
        expect_values(call, expected(x), given=given, what="y")


def test_backward_formula(kata, device):
    """float32 dx = y · (dy − Σ dy · y), for a random dy, from the y forward saved

    Softmax's Jacobian is diag(y) − y yᵀ: each output depends on every input of its row
    through the sum. Applied to dy it gives a product with y and one sum along the row.

    dx_j = y_j · (dy_j − Σ_k dy_k · y_k), the sum over the row's N columns (N = 100 here, with
    the spare lanes of dy and y loaded as 0, so that they add nothing to it).
    """
    for shape in ((3, 100), (2, 64)):
        x, dy = make(shape, device=device, scale=2.0)
        given = described(x)
        call, grads = both(kata, x, dy, given=given)
        want = expected_dx(call.out, dy)
        expect_values(replace(call, out=grads[0]), want, given=given, what="dx")


def test_strided_rows(kata, device):
    """strided x (rows further apart than N) and a transposed or expanded dy are read in place

    A slice of a wider tensor has rows more than N elements apart; autograd may hand backward
    dy transposed, or expanded: the dy of a loss that sums y is a single 1 with every stride
    0. Copying them first would cost a pass through memory. The outputs y and dx are new
    tensors whose rows are N apart: their strides are not x's or dy's.

    Pass the kernels each tensor's row stride, and dy's column stride too: column c of row r
    lies at r times the row stride plus c times the column stride.
    """
    x, dy = make((3, 100), device=device, scale=2.0)
    x = F.pad(x, (0, 28), value=math.nan)[:, :100]  # the first 100 columns of 128: rows 128 apart
    strided = f"{described(x)} with rows {x.stride(0)} apart (a slice of a wider tensor)"
    cases = (
        (dy.t().contiguous().t(), f"{strided}, and dy transposed (strides (1, 3))"),
        (torch.ones((), device=device).expand(3, 100), f"{strided}, and dy of y.sum()"),
    )
    advice = "read row i at X + i · (x's row stride), and write y at Y + i · (y's row stride)."
    for dy, given in cases:
        call, grads = both(kata, x, dy, given=given)
        with triton_engine.blame_strides(advice, right_when_contiguous, kata, x):
            expect_values(call, expected(x), given=given, what="y")
        expect_values(
            replace(call, out=grads[0]), expected_dx(call.out, dy), given=given, what="dx"
        )


def test_leading_dims(kata, device):
    """any number of rows and leading dims: x of shape (A, B, T, N), and 133 rows

    The kernels compute rows; the leading dims only say how many there are, which is their
    product, not x's first size. However many there are, each one is computed: 133 rows are
    more than a persistent grid of one program per SM takes in one pass (an H100 SXM has 132
    SMs), and more than a loop of a fixed number of rounds may reach.

    View x as M rows of N (M the product of the leading dims), launch one program per row (or
    P programs taking rows p, p + P, p + 2P, ... while they are below M), and view y and dx
    back in x's shape.
    """
    x, dy = make((2, 2, 2, 32), device=device)
    given = described(x)
    call, grads = both(kata, x, dy, given=given)
    expect_values(call, expected(x), given=given, what="y")
    expect_values(replace(call, out=grads[0]), expected_dx(call.out, dy), given=given, what="dx")
    # Forward and backward, at a narrow N: 133 programs a kernel in the interpreter, about a
    # millisecond each; a backward grid capped below the rows leaves dx rows unwritten.
    x, dy = make((7, 19, 32), device=device)  # 133 rows in leading dims of 7 and 19
    given = f"{described(x)} (133 rows)"
    call, grads = both(kata, x, dy, given=given)
    expect_values(call, expected(x), given=given, what="y")
    expect_values(replace(call, out=grads[0]), expected_dx(call.out, dy), given=given, what="dx")


@pytest.mark.parametrize("dtype", HALF, ids=dtype_name)
def test_half_precision(kata, device, dtype):
    """float16 and bfloat16 inputs give y and dx in that dtype, within its tolerance

    Half precision in, half precision out: y and dx in x's dtype, so that the bytes stored are
    half of float32's. Only the arithmetic inside the kernels is float32: exp of a float16 is
    no Triton operation, and a sum of exponentials in half precision loses digits.

    Allocate y and dx like x; convert each loaded value to float32, compute, and round once,
    at the store.
    """
    x, dy = make((2, 100), dtype, device=device, scale=2.0)
    given = described(x)
    call, grads = both(kata, x, dy, given=given)
    expect_values(call, expected(x), given=given, what="y")
    expect_values(replace(call, out=grads[0]), expected_dx(call.out, dy), given=given, what="dx")


@pytest.mark.parity
def test_module_like_nn_softmax(kata, device):
    """softmax and Softmax() work as torch.softmax and nn.Softmax(dim=-1), through autograd

    The wrappers apply SoftmaxFunction, so that autograd calls your backward, and take any x
    whose last dimension holds the rows, a single vector of shape (N,) included. Backward
    writes dx into a tensor of its own: the dy autograd hands it may be handed to other layers
    too.

    softmax applies SoftmaxFunction to x; the module holds no parameters, its dim is −1, and
    its forward calls softmax. A vector of N elements is one row of N.
    """
    x, dy = make((2, 3, 64), device=device)
    vector = x[0, 0].clone()
    given = f"softmax(x) on a single vector x {shape_of(vector)}"
    call = FORWARD.run(kata, vector, given=given, call=kata.softmax)
    expect_values(call, expected(vector), given=given)
    # Every call first overseen: the calls through autograd below run the same kernels on the
    # same shapes unwatched, which is safe only once these stayed inside their tensors.
    given = f"{described(x)}, backward(dy)"
    call, _ = both(kata, x, dy, given=given)
    if not torch.equal(call.inputs[1], dy):
        fail(
            f"{given}: your backward changed dy, the caller's tensor (autograd may hand the same "
            "one to other layers). Write dx into a tensor of its own."
        )
    mine, theirs = kata.Softmax().to(device), torch.nn.Softmax(dim=-1).to(device)
    given = "Softmax()"
    if getattr(mine, "dim", None) != theirs.dim:
        got = getattr(mine, "dim", None)
        fail(f"{given}: .dim is {got!r}, expected -1, as nn.Softmax(dim=-1) has.")
    if list(mine.state_dict()):
        fail(f"{given}: state_dict holds {sorted(mine.state_dict())}; nn.Softmax holds nothing.")
    given = f"Softmax() on x {shape_of(x)}"
    expect_values(FORWARD.run(kata, x, given=given, call=mine), expected(x), given=given)
    xs = [x.clone().requires_grad_() for _ in range(2)]
    outs = [
        expect_tensor(layer(v), "Softmax()") for layer, v in zip((mine, theirs), xs, strict=True)
    ]
    expect_node_of(
        outs[0].grad_fn, kata.SoftmaxFunction, name="SoftmaxFunction", given=given,
        returns="SoftmaxFunction.apply(x)",
    )  # fmt: skip
    for out in outs:
        out.backward(dy)
    expect_close(xs[0].grad, xs[1].grad, given=f"{given}, y.backward(dy)", what="x.grad")


# -- how the checks call SoftmaxFunction, and what they expect --------------------------------

SOFTMAX = Oversight(
    function="SoftmaxFunction",
    inputs=(("x", math.nan), ("dy", math.nan)),  # what a read past x or past dy finds
    activations=(0, 1),
    views=triton_engine.VIEWS | triton_engine.SPLITS_AND_FILLS,
    in_bounds="test_masked_tail",
    does_the_work="test_kernels_do_the_work",
    race_free="test_race_free",
    kernels="the kernels",
    stray_advice="Mask every tl.load and tl.store (mask = cols < N, cols the block's columns, "
    "and rows < M as well where a program takes several rows), and move each pointer only "
    "within its own tensor: each tensor's rows by its own stride (x's rows may lie further "
    "apart than y's, dy's and dx's).",
    overrun_advice="Mask every store (and rows < M where a program takes several rows), offset "
    "each tensor's rows by its own stride, and launch no more programs than there are rows.",
    copy_advice="Let the kernels read x and dy where they are, in their own dtype: pass the row "
    "strides (and dy's column stride: autograd may hand a transposed or expanded dy) and cast "
    "after tl.load.",
    work_advice="do the arithmetic and the casts in the kernels; torch should only allocate y "
    "and dx and reshape.",
    launch_advice="Launch yours with kernel[grid](...): forward and backward, one program per row.",
    unwritten_advice="Does every row get a program, and does each program walk all N columns "
    "of its row, the last partial block included?",
    undefined_advice="Give other= to every masked load: -inf for x, whose lanes reach the max "
    "and the exponentials (exp(-inf) = 0), 0.0 for y and dy, whose lanes reach backward's sum.",
    race_advice="Give each row to one program (a loop over its blocks), or let each program of "
    "a split row store its block's max and sum (backward: its part of Σ dy · y) in a slot of "
    "its own, for the next kernel to combine.",
)
FORWARD = replace(SOFTMAX, inputs=SOFTMAX.inputs[:1], activations=(0,))
MAX_LANES = 65536  # the widest block the contract allows: Liger-Kernel's single-block limit
WIDE = 70001  # wider than MAX_LANES, and odd: a multiple of no block


def same_values(a, b):
    """Equal, NaN for NaN: a y that holds NaN (another check's mistake) is still the one saved."""
    return a.shape == b.shape and bool(((a == b) | (a.isnan() & b.isnan())).all())


def make(shape, dtype=torch.float32, *, device, scale=1.0):
    """x (randn · scale) and a dy like it (randn)."""
    x = (torch.randn(shape, device=device) * scale).to(dtype)
    dy = torch.randn(shape, device=device).to(dtype)
    return x, dy


def wide(rows, *, device):
    """Rows of WIDE whose max is their first element: the running max never grows."""
    x = torch.randn(rows, WIDE, device=device)
    x[:, 0] = 8.0  # above the 70000 other values of randn, whose largest is about 4.5
    return x


def ramp(rows, *, device):
    """Rows of WIDE that rise along their length: the running max grows in every block."""
    j = torch.arange(WIDE, device=device, dtype=torch.float32)
    # Up 60 along the row, noise ±1: the last block's max beats every earlier block's, whatever
    # the block, and exp(60) is still far from float32's overflow, which is another check's.
    return 60 * j / WIDE + torch.randn(rows, WIDE, device=device) / 4


def described(x):
    return f"SoftmaxFunction on x {shape_of(x)}"


def forward(kata, x, *, given, traffic=False) -> tuple[Call, object]:
    """forward alone, overseen: (the call, out = y; the ctx it saved into)."""
    saved = []

    def call(x):
        y, ctx = call_forward(kata.SoftmaxFunction, x)
        saved.append(ctx)
        return y

    out = FORWARD.run(kata, x, given=given, call=call, traffic=traffic)
    return out, saved[0]


def both(kata, x, dy, *, given, traffic=False) -> tuple[Call, tuple]:
    """forward then backward, overseen: (the call, out = y; backward's result, (dx,))."""
    grads = []

    def call(x, dy):
        y, ctx = call_forward(kata.SoftmaxFunction, x)
        expect_tensor(y, "forward")
        grads.append(call_backward(kata.SoftmaxFunction, ctx, dy, given=given))
        return y

    out = SOFTMAX.run(kata, x, dy, given=given, call=call, traffic=traffic)
    return out, grads[0]


def expected(x):
    """torch.softmax over the last dim, in float64, rounded to x's dtype."""
    return torch.softmax(x.double(), -1).to(x.dtype)


def expected_dx(y, dy):
    """y · (dy − Σ dy · y) in float64 from the y forward returned, rounded to dy's dtype."""
    y = expect_tensor(y, "forward").detach()
    if y.shape != dy.shape:
        y = y.reshape(dy.shape) if y.numel() == dy.numel() else y
    y64, dy64 = y.double(), dy.double()
    return (y64 * (dy64 - (dy64 * y64).sum(-1, keepdim=True))).to(dy.dtype)


# float16 values get rtol 2e-3 (two ulps): a correct kernel rounds y once at its store, and
# dx is computed from that rounded y.
RTOL = {torch.float16: 2e-3}


def expect_values(call: Call, want, *, given, what="y"):
    """The call's output (or the dx put in its place) matches want, every element written;
    skipped on an engine fault."""
    SOFTMAX.expect_values(call, want, given=given, rtol=RTOL.get(want.dtype), what=what)


def right(call: Call, want) -> bool:
    """Whether the call's y is want (a question, never a failure)."""
    return triton_engine.passes(lambda: expect_values(call, want, given=""))


def right_on(kata, x) -> bool:
    """Whether forward gets these rows right: the control a check compares its own case with."""
    return triton_engine.passes(
        lambda: expect_values(forward(kata, x, given="")[0], expected(x), given="")
    )


def ordinary(kata, given, x100=None, *, device) -> None:
    """Where y is wrong for ordinary rows too (randn, N = 64, then N = 100: x100 if given), the
    mistake is not the calling check's: fail for the check whose rows those are."""
    x64, _ = make((2, 64), device=device)
    if not right_on(kata, x64):
        fail_for(
            "test_forward_formula",
            f"{given}: y is wrong, and so it is for ordinary rows of 64 (randn): see the "
            "formula check.",
        )
    x100 = make((2, 100), device=device)[0] if x100 is None else x100
    if not right_on(kata, x100):
        fail_for(
            "test_non_power_of_two_width",
            f"{given}: y is wrong, and so it is for ordinary rows of 100 (randn): see the check "
            "of widths between powers of two.",
        )


def right_when_contiguous(kata, x) -> bool:
    """Whether forward gets these values right where x is contiguous, so that what went wrong
    with x's rows further apart is the strides' doing."""
    return right_on(kata, x.contiguous())


def _summary(out: torch.Tensor) -> str:
    """What a wrong y holds, in a few words: NaN, zeros, or its range."""
    if out.isnan().any():
        return "NaN"
    if not out.any():
        return "only zeros"
    return f"values from {out.min().item():.3g} to {out.max().item():.3g}"


# -- on a GPU: --perf -------------------------------------------------------------------------


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your softmax and torch.softmax, forward and backward.
    On the CPU the kernels run in Triton's interpreter, which says nothing about their speed."""
    setting = triton_engine.perf_setting(
        device,
        "Forward reads x twice and writes y once (online), backward reads y and dy twice and "
        "writes dx: a pair of kernels near a copy's speed keeps each block in registers, with "
        "enough warps for wide blocks (num_warps = min(max(BLOCK // 256, 1), 8)). torch.softmax "
        "reads a row that fits in one block only once.",
        "kernels",
    )
    x, _ = make(setting.shape, setting.dtype, device=device)
    x.requires_grad_()
    return PerfCase(
        given=f"softmax on x {shape_of(x)}{setting.where}",
        mine=lambda: kata.softmax(x), builtin=lambda: torch.softmax(x, -1),
        builtin_name="torch.softmax", inputs=(x,), bytes_moved=2 * x.nbytes, note=setting.note,
    )  # fmt: skip
