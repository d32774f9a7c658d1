"""Hidden checks for the BatchNorm-backward kata, compared with autograd through F.batch_norm.

Most checks call the learner's forward and backward directly, with a recording ctx
(checks.call_forward / call_backward): what forward saved can be inspected, and backward
runs where the grader can watch it for autograd. Special gradients isolate the two terms of
dL/dx: a gradient constant over a channel reaches x only through the batch mean, one
proportional to x̂ only through the batch variance. Interview core first, then torch parity
(@pytest.mark.parity): float64 computed in float64, a non-contiguous grad_out and half
precision. Which dtype the function computes in is dtype policy: the core compares float64
values at float32's tolerance, and gradcheck, which needs float64 arithmetic, skips a forward
that computes in float32.

Half precision is compared with the formula in float64 on the same half inputs, rounded once
to their dtype: what float32 arithmetic gives, within an ulp. Not with torch's CPU autograd,
which computes half inputs with statistics rounded to the input's dtype (its CUDA kernels keep
them in float32), which the half-precision check's inputs expose.
"""

import pytest
import torch
import torch.nn.functional as F

from norm_katas.grader.checks import (
    BUILTIN_NORMS,
    HALF_OFFSET,
    PerfCase,
    call_backward,
    call_forward,
    expect_backward_by_hand,
    expect_backward_shapes,
    expect_close,
    expect_float64_arithmetic,
    expect_from_scratch,
    expect_function_follows_device,
    expect_gradcheck,
    expect_grads_close,
    expect_rounded_once,
    expect_saves_only_what_backward_needs,
    expect_tensor,
    expect_through_function,
    expect_vectorized,
    fail,
    shape_of,
)

FORBIDDEN = BUILTIN_NORMS | {
    "native_batch_norm_backward", "batch_norm_backward", "cudnn_batch_norm_backward",
    "miopen_batch_norm_backward", "native_layer_norm_backward", "native_group_norm_backward",
    "batch_norm_backward_reduce", "batch_norm_backward_elemt",
}  # fmt: skip


def inputs(*shape, dtype=torch.float64, device="cpu", spread=2.0, centre=1.0):
    """x of `shape` (N, C, *) and a random weight and bias for its C channels."""
    c = shape[1]
    x = torch.randn(shape, dtype=dtype, device=device) * spread + centre
    w = torch.randn(c, dtype=dtype, device=device) + 1
    b = torch.randn(c, dtype=dtype, device=device)
    return x, w, b


def run(kata, x, w, b, eps, grad_out, *, given):
    """The learner's forward and backward, called directly: (y, (grad_x, grad_w, grad_b))."""
    y, ctx = call_forward(kata.BatchNormFunction, x, w, b, eps)
    y = expect_tensor(y, "forward")
    grads = call_backward(kata.BatchNormFunction, ctx, grad_out, given=given)
    return y, grads[:3]


def reference(x, w, b, eps, grad_out):
    """Autograd through the built-in, in training mode: (y, {input, weight, bias gradients})."""
    xi, wi, bi = (t.detach().clone().requires_grad_() for t in (x, w, b))
    y = F.batch_norm(xi, None, None, wi, bi, training=True, eps=eps)
    y.backward(grad_out)
    return y.detach(), {"input": xi.grad, "weight": wi.grad, "bias": bi.grad}


def named(grads):
    return dict(zip(("input", "weight", "bias"), grads, strict=True))


def describe(x, eps=1e-5):
    return f"BatchNormFunction on x {shape_of(x)} (eps={eps:g})"


def per_channel(x):
    """(C,) values -> shape broadcasting along dim 1 of x."""
    return [1, -1] + [1] * (x.dim() - 2)


def test_is_an_autograd_function(kata, device):
    """BatchNormFunction is a torch.autograd.Function, and batch_norm_train goes through it

    The gradient must come from your backward: batch_norm_train has to call
    BatchNormFunction.apply, so that autograd records your Function in the graph.

    class BatchNormFunction(torch.autograd.Function) with @staticmethod forward and backward;
    batch_norm_train returns BatchNormFunction.apply(x, weight, bias, eps).
    """
    x, w, b = inputs(4, 3, 2, 2, device=device)
    run = lambda: kata.batch_norm_train(x, w.requires_grad_(), b.requires_grad_())  # noqa: E731
    expect_through_function(
        kata.BatchNormFunction, "BatchNormFunction", run, caller="batch_norm_train"
    )


def test_backward_returns_a_grad_per_input(kata, device):
    """backward returns (grad_x, grad_weight, grad_bias, None): shapes of x, (C,), (C,)

    autograd expects one gradient per input of forward, in order, each shaped like its input;
    eps is a float and takes none.

    return grad_x, grad_weight, grad_bias, None.
    """
    x, w, b = inputs(8, 3, device=device)
    given = describe(x)
    _, ctx = call_forward(kata.BatchNormFunction, x, w, b, 1e-5)
    result = call_backward(kata.BatchNormFunction, ctx, torch.randn_like(x), given=given)
    names = ("grad_x", "grad_weight", "grad_bias", "the None for eps")
    expect_backward_shapes(result, (x, w, b, 1e-5), names=names, given=given)


def test_input_unmodified(kata, device):
    """forward leaves x unmodified, and backward leaves grad_out unmodified

    The caller still owns both: autograd may hand the same grad_out to other functions.

    xc = x - mean, not x -= mean; g = grad_out * weight, not grad_out.mul_(weight).
    """
    x, w, b = inputs(4, 3, 2, 2, device=device)
    grad_out = torch.randn_like(x)
    x0, g0 = x.clone(), grad_out.clone()
    run(kata, x, w, b, 1e-5, grad_out, given=describe(x))
    if not torch.equal(x, x0):
        fail(f"{describe(x)}: forward changed its input x in place.")
    if not torch.equal(grad_out, g0):
        fail(f"{describe(x)}: backward changed grad_out in place.")


def test_from_scratch(kata, device):
    """implemented from tensor operations, not the built-in batch norm or its backward

    The exercise is the derivation: F.batch_norm and torch.ops.aten.native_batch_norm_backward
    are off limits, in forward and in backward.

    mean, sum, rsqrt, view and broadcasting are all you need.
    """
    x, w, b = inputs(4, 3, 2, 2, device=device)
    grad_out = torch.randn_like(x)
    expect_from_scratch(lambda: run(kata, x, w, b, 1e-5, grad_out, given=describe(x)), FORBIDDEN)


def test_vectorized(kata, device):
    """vectorized: no Python loop over channels or samples, in forward or backward

    Every reduction runs over every channel at once: one call over dims (0, 2, 3), then
    broadcasting along dim 1.

    Each statistic is one reduction over the dims (0, 2, 3, ...): μ and σ² in forward, mean(g) and
    mean(g · x̂) in backward, and sums for the parameters; no loop over channels.
    """
    small, large = inputs(2, 2, 3, 3, device=device), inputs(16, 32, 8, 8, device=device)

    def both(x, w, b, grad_out):
        return run(kata, x, w, b, 1e-5, grad_out, given=describe(x))

    expect_vectorized(
        both,
        (*small, torch.ones_like(small[0])),
        (*large, torch.ones_like(large[0])),
        given="BatchNormFunction",
    )


def test_backward_by_hand(kata, device):
    """backward computes the gradients itself: no autograd inside it

    No torch.autograd.grad, no .backward(), no forward re-run under torch.enable_grad(): the
    exercise is to derive dL/dx, dL/dw and dL/db and write them with tensor operations.

    From grad_out and the saved x̂ and rstd: sums for weight and bias, the two-mean formula for x.
    """
    x, w, b = inputs(4, 3, 2, 2, device=device)
    _, ctx = call_forward(kata.BatchNormFunction, x, w, b, 1e-5)
    given = describe(x)
    expect_backward_by_hand(
        lambda: call_backward(kata.BatchNormFunction, ctx, torch.randn_like(x), given=given),
        given=given,
    )


def test_saves_only_what_backward_needs(kata, device):
    """forward saves only what backward needs: no autograd history, one tensor the size of x

    Saved tensors live until backward: keeping the input's autograd graph (ctx.x = x on an
    input that requires grad) or two copies of an x-sized tensor costs memory for nothing.

    ctx.save_for_backward(x_hat, rstd, weight): or x with the channel means and rstd.
    """
    x, w, b = inputs(4, 3, 2, 2, device=device)
    given = describe(x)
    xr, wr, br = (t.clone().requires_grad_() for t in (x, w, b))
    applied = expect_tensor(kata.batch_norm_train(xr, wr, br), "batch_norm_train")
    _, ctx = call_forward(kata.BatchNormFunction, x, w, b, 1e-5)
    # one x-sized tensor, plus a few numbers per channel and per parameter
    allowance = 8 * x.shape[1]
    expect_saves_only_what_backward_needs(applied, ctx, x, allowance=allowance, given=given)


def test_forward_matches_torch(kata, device):
    """forward normalizes like F.batch_norm in training: per channel, biased variance

    Each channel is centred by its batch mean and divided by sqrt(var + eps) over every dim
    but 1, var the mean of the squared deviations (divide by m, not m - 1).

    y = (x - mean) * rsqrt(mean((x - mean)²) + eps) * weight + bias, dims = (0, 2, 3, ...).
    """
    for dtype in (torch.float32, torch.float64):
        for shape in ((8, 3), (4, 3, 5, 2)):
            x, w, b = inputs(*shape, dtype=dtype, device=device)
            y, _ = call_forward(kata.BatchNormFunction, x, w, b, 1e-5)
            want = F.batch_norm(x, None, None, w, b, training=True, eps=1e-5)
            expect_close(expect_tensor(y, "forward"), want, given=describe(x))
    x, w, b = inputs(4, 3, 2, 2, device=device, spread=0.1)
    y, _ = call_forward(kata.BatchNormFunction, x, w, b, 0.05)
    want = F.batch_norm(x, None, None, w, b, training=True, eps=0.05)
    expect_close(expect_tensor(y, "forward"), want, given=describe(x, 0.05))


def test_grad_bias(kata, device):
    """grad_bias sums grad_out over every dim but the channel's: (N, H, W)

    Each channel's bias is added at every position of every sample, so its gradient collects
    all of them, not only the batch dim.

    ∂L/∂β_c = Σ dy[n, c, h, w] over n, h and w.
    """
    x, w, b = inputs(4, 3, 2, 5, device=device)
    grad_out = torch.randn_like(x)
    _, (_, _, grad_b) = run(kata, x, w, b, 1e-5, grad_out, given=describe(x))
    _, want = reference(x, w, b, 1e-5, grad_out)
    expect_grads_close({"bias": grad_b}, {"bias": want["bias"]}, given=describe(x))


def test_grad_weight(kata, device):
    """grad_weight sums grad_out · x̂ over every dim but the channel's

    Each channel's weight scales x̂ at every position of every sample: its gradient is the sum
    of grad_out times x̂ there (x̂, not x: the weight multiplies the normalized value).

    ∂L/∂γ_c = Σ dy · x̂ over n, h and w.
    """
    x, w, b = inputs(4, 3, 2, 5, device=device)
    grad_out = torch.randn_like(x)
    _, (_, grad_w, _) = run(kata, x, w, b, 1e-5, grad_out, given=describe(x))
    _, want = reference(x, w, b, 1e-5, grad_out)
    expect_grads_close({"weight": grad_w}, {"weight": want["weight"]}, given=describe(x))


def test_grad_x_through_the_mean(kata, device):
    """grad_x accounts for the batch mean: a gradient constant over a channel gives zero

    Adding a constant to a channel's values moves its batch mean by the same amount and leaves
    x̂ unchanged, so a gradient of x̂ constant over the channel gives dL/dx = 0: the −mean(g) term.

    With g = dy · γ: ∂L/∂x = (1/σ) (g − mean(g) − x̂ · mean(g · x̂)), the means per channel over n,
    h and w; the mean(g) term is the path through μ.
    """
    x, w, b = inputs(8, 3, device=device)
    per_c = torch.randn(1, 3, dtype=x.dtype, device=device)
    grad_out = (per_c / w).expand_as(x).clone()  # g = grad_out · w: constant over each channel
    given = f"{describe(x)} with grad_out · weight constant over each channel"
    _, (grad_x, _, _) = run(kata, x, w, b, 1e-5, grad_out, given=given)
    _, want = reference(x, w, b, 1e-5, grad_out)
    expect_grads_close({"input": grad_x}, {"input": want["input"]}, given=given)


def test_grad_x_through_the_variance(kata, device):
    """grad_x accounts for the batch variance: a gradient proportional to x̂ gives zero

    Scaling a channel's deviations scales its variance with them and leaves x̂ unchanged, so a
    gradient of x̂ proportional to x̂ gives (almost) zero: the −x̂ · mean(g · x̂) term.

    ∂L/∂x = (1/σ) (g − mean(g) − x̂ · mean(g · x̂)) with g = dy · γ and σ = √(σ² + ε); the x̂ ·
    mean(g · x̂) term is the path through σ².
    """
    x, w, b = inputs(8, 3, device=device)
    x_hat = F.batch_norm(x, None, None, training=True, eps=1e-5)
    grad_out = x_hat / w  # g = grad_out · w = x̂
    given = f"{describe(x)} with grad_out · weight equal to x̂"
    _, (grad_x, _, _) = run(kata, x, w, b, 1e-5, grad_out, given=given)
    _, want = reference(x, w, b, 1e-5, grad_out)
    expect_grads_close({"input": grad_x}, {"input": want["input"]}, given=given)


def test_backward_eps_inside_sqrt(kata, device):
    """backward uses the same 1/sqrt(var + eps) as forward

    eps sits inside the square root in forward; a backward that recomputes the scale as
    1 / (sqrt(var) + eps) is off wherever a channel's variance is small.

    Save rstd = rsqrt(var + eps) in forward and reuse it in backward.
    """
    x, w, b = inputs(8, 3, device=device, spread=0.1)
    grad_out = torch.randn_like(x)
    given = f"{describe(x, 0.05)} on small inputs"
    _, grads = run(kata, x, w, b, 0.05, grad_out, given=given)
    _, want = reference(x, w, b, 0.05, grad_out)
    expect_grads_close({"input": grads[0]}, {"input": want["input"]}, given=given)


def test_grad_x_over_n_h_w(kata, device):
    """on (N, C, H, W) the two batch means of grad_x run over N, H and W together

    Every position of every sample shares the channel's statistics, so the mean terms of
    dL/dx average over (N, H, W), exactly as forward's statistics do.

    Both means in ∂L/∂x = (1/σ) (g − mean(g) − x̂ · mean(g · x̂)) run over the m = N·H·W values of a
    channel (dims 0, 2, 3), as in forward.
    """
    x, w, b = inputs(4, 3, 2, 5, device=device)
    grad_out = torch.randn_like(x)
    given = describe(x)
    _, (grad_x, _, _) = run(kata, x, w, b, 1e-5, grad_out, given=given)
    _, want = reference(x, w, b, 1e-5, grad_out)
    expect_grads_close({"input": grad_x}, {"input": want["input"]}, given=given)


def test_follows_device(kata, device):
    """runs on CUDA: forward and backward create nothing on the CPU

    Every tensor forward or backward creates must live on the input's device.

    torch.zeros_like(x) or device=x.device for new tensors.
    """
    x, w, b = inputs(4, 3, 2, 2, dtype=torch.float32)

    def both(x, w, b, grad_out):
        return run(kata, x, w, b, 1e-5, grad_out, given=describe(x))

    expect_function_follows_device(
        both, x, w, b, torch.randn_like(x), device=device, given=describe(x)
    )


@pytest.mark.broad
def test_gradcheck(kata, device):
    """torch.autograd.gradcheck passes in float64

    gradcheck compares your backward with finite differences of your forward, element by
    element: the analytic gradient must be the derivative of what forward computes.

    Run torch.autograd.gradcheck(batch_norm_train, (x, weight, bias)) on small float64 inputs
    (it needs a forward that computes float64 in float64; one in float32 is skipped here).
    """
    for shape in ((5, 3), (3, 2, 2, 2)):
        x, w, b = (t.requires_grad_() for t in inputs(*shape, device=device))
        given = f"torch.autograd.gradcheck(batch_norm_train, ...) on float64 x {shape_of(x)}"
        expect_gradcheck(
            lambda x, w, b: kata.batch_norm_train(x, w, b, 1e-5), (x, w, b), given=given
        )


@pytest.mark.broad
def test_gradients_match_autograd(kata, device):
    """the gradients of x, weight and bias match autograd through F.batch_norm, float32 and float64

    Your backward must give what autograd gives for the built-in in training mode, on (N, C)
    and (N, C, H, W) inputs.

    grad_x = rstd · (g − mean(g) − x̂ · mean(g · x̂)); grad_w = Σ grad_out · x̂; grad_b = Σ grad_out.
    """
    for dtype in (torch.float32, torch.float64):
        for shape in ((8, 3), (4, 3, 5, 2)):
            x, w, b = inputs(*shape, dtype=dtype, device=device)
            grad_out = torch.randn_like(x)
            _, grads = run(kata, x, w, b, 1e-5, grad_out, given=describe(x))
            _, want = reference(x, w, b, 1e-5, grad_out)
            expect_grads_close(named(grads), want, given=describe(x))


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """float64 inputs are computed in float64, in forward and in backward, as torch does

    torch computes in float32 only for float16 and bfloat16 inputs; x.float() or
    grad_out.float(), as code written for mixed precision often has it, also rounds a float64
    input or gradient to float32's 7 significant digits.

    compute dtype = float32 for float16/bfloat16 inputs, x.dtype otherwise, in both passes.
    """
    x, w, b = inputs(4, 3, 2, 2, device=device)
    grad_out = torch.randn_like(x)

    def forward(v):
        return run(kata, v, w, b, 1e-5, grad_out, given=describe(v))[0]

    def grad_x(v):
        return run(kata, v, w, b, 1e-5, grad_out, given=describe(v))[1][0]

    expect_float64_arithmetic(forward, x, given=f"{describe(x)}: forward")
    expect_float64_arithmetic(grad_x, x, given=f"{describe(x)}: grad_x")


@pytest.mark.parity
def test_noncontiguous_grad_out(kata, device):
    """a grad_out that is not contiguous works

    autograd hands backward whatever layout the next operation produced, for example a
    channels-last or transposed tensor: .view() on it fails.

    Use .reshape() or reductions that take any layout, never .view() on grad_out.
    """
    x, w, b = inputs(4, 3, 2, 5, device=device)
    grad_out = torch.randn(4, 5, 2, 3, dtype=x.dtype, device=device).permute(0, 3, 2, 1)
    given = f"{describe(x)} with a permuted (non-contiguous) grad_out"
    _, grads = run(kata, x, w, b, 1e-5, grad_out, given=given)
    _, want = reference(x, w, b, 1e-5, grad_out)
    expect_grads_close(named(grads), want, given=given)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, device, dtype):
    """half-precision inputs are computed in float32, the gradients returned in their dtype

    float16 keeps 11 significant bits and bfloat16 8: a mean or sum of values far from zero,
    rounded to them, is off by a good part of the spread. On grad_out = 384 + randn (float16) a
    channel's Σ grad_out rounded to float16 is all that is left of m · dy − Σ dy.

    Upcast x, grad_out and the weight to float32, save float32 statistics, and round once at
    the end: y.to(x.dtype), grad_x.to(grad_out.dtype), grad_weight.to(weight.dtype).
    """
    offset = HALF_OFFSET[dtype]
    # One input far from zero at a time: both at once would make the gradient sensitive to
    # float32's own rounding of the mean, which no float32 implementation avoids. 64 values
    # per channel keep Σ grad_out (24576) within float16's range.
    for x_shift, g_shift, far in ((offset, 0.0, "x"), (0.0, offset, "grad_out")):
        x = (x_shift + torch.randn(4, 4, 4, 4, device=device)).to(dtype)
        grad_out = (g_shift + torch.randn(4, 4, 4, 4, device=device)).to(dtype)
        # The initial weight and bias: the affine step is exact in any precision, so only the
        # statistics and the gradient's arithmetic show.
        w = torch.ones(4, dtype=dtype, device=device)
        b = torch.zeros(4, dtype=dtype, device=device)
        given = f"{describe(x)} with {far} = {offset:g} + randn"
        y, grads = run(kata, x, w, b, 1e-5, grad_out, given=given)
        want_y, want = reference(x.double(), w.double(), b.double(), 1e-5, grad_out.double())
        expect_rounded_once(y, named(grads), want_y, want, dtype=dtype, given=given)


def perf_case(kata, device):
    """What --perf times: your batch_norm_train and F.batch_norm in training, with backward."""
    shape = (64, 256, 56, 56) if device.type == "cuda" else (16, 64, 32, 32)
    x, w, b = (t.requires_grad_() for t in inputs(*shape, dtype=torch.float32, device=device))
    return PerfCase(
        given=f"batch_norm_train on x {shape_of(x)}", mine=lambda: kata.batch_norm_train(x, w, b),
        builtin=lambda: F.batch_norm(x, None, None, w, b, training=True),
        builtin_name="F.batch_norm", inputs=(x, w, b), bytes_moved=2 * x.nbytes,
    )  # fmt: skip
