"""Hidden checks for the BatchNorm-backward kata, compared with autograd through F.batch_norm.

The checks are the backward katas' template (checks.FunctionKata), declared below with
BatchNorm's dims. Most call the learner's forward and backward directly, with a recording ctx
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

Each core property in every mode where it applies: forward and backward called directly, and
through autograd (the wrapper's Function.apply). eps=0.05 or 0.1 on small inputs where eps must
show; "both" runs (N, C) and (N, C, H, W):

    property                   forward (direct)       backward (direct)         via autograd
    biased stats, eps in sqrt  forward_matches (both) backward_eps_inside_sqrt  wrapper_passes_eps
    grad_x: weight, mean, var  -                      grad_x_through_the_*,     gradcheck (both)
                                                      grad_x_over_n_h_w
    weight elements at 0       -                      zero_weight_elements      -
    grad_w, grad_b (N, H, W)   -                      grad_weight, grad_bias,   gradcheck (both)
                                                      gradients_match (both)
    by hand, from scratch      from_scratch           backward_by_hand          is_an_autograd_fn
    saved tensors              saves_only_what_...    -                         saves_only_...
    float64 / half / layout    parity: computes_in_float64, half_precision, noncontiguous_grad_out
"""

import pytest
import torch
import torch.nn.functional as F

from norm_katas.checks import BUILTIN_NORMS, FunctionKata, Suite

SUITE = Suite()

BATCH_NORM = FunctionKata(
    function="BatchNormFunction",
    wrapper="batch_norm_train",
    builtin=lambda x, w, b, eps: F.batch_norm(x, None, None, w, b, training=True, eps=eps),
    builtin_name="F.batch_norm",
    feature_dim=1,  # weight and bias run along the channels, dim 1 of (N, C, *)
    per_feature=True,  # one mean and variance per channel, over (N, H, W)
    constant="over each channel",
    forbidden=BUILTIN_NORMS | {
        "native_batch_norm_backward", "batch_norm_backward", "cudnn_batch_norm_backward",
        "miopen_batch_norm_backward", "native_layer_norm_backward", "native_group_norm_backward",
        "batch_norm_backward_reduce", "batch_norm_backward_elemt",
    },
)  # fmt: skip


def test_is_an_autograd_function(kata, device):
    """BatchNormFunction is a torch.autograd.Function, and batch_norm_train goes through it

    The gradient must come from your backward: batch_norm_train has to call
    BatchNormFunction.apply, so that autograd records your Function in the graph.

    BatchNormFunction subclasses torch.autograd.Function, with forward and backward as static
    methods taking ctx first; batch_norm_train hands x, weight, bias and eps to the Function's apply
    and returns what it gives.
    """
    BATCH_NORM.is_an_autograd_function(kata, device, (4, 3, 2, 2))


def test_wrapper_passes_eps(kata, device):
    """batch_norm_train passes eps on to BatchNormFunction, and its eps defaults to 1e-5

    batch_norm_train(x, weight, bias) must normalize with eps=1e-5, as the built-in does, and
    batch_norm_train(x, weight, bias, eps) with the eps it is given.

    The wrapper's own eps argument, defaulting to 1e-5, goes on to the Function's apply as its
    last input, untouched: no constant of the wrapper's own in its place.
    """
    BATCH_NORM.wrapper_passes_eps(kata, device, (8, 3))


def test_backward_returns_a_grad_per_input(kata, device):
    """backward returns (grad_x, grad_weight, grad_bias, None): shapes of x, (C,), (C,)

    autograd expects one gradient per input of forward, in order, each shaped like its input;
    eps is a float and takes none.

    Four values, in the order forward took its inputs: the gradient of x, of the weight, of the
    bias, and None for eps.
    """
    BATCH_NORM.backward_returns_a_grad_per_input(kata, device, (8, 3))


def test_input_unmodified(kata, device):
    """forward leaves x unmodified, and backward leaves grad_out unmodified

    The caller still owns both: autograd may hand the same grad_out to other functions.

    Compute x − μ and g = dy · γ into new tensors; the in-place forms (the -= operator, or a method
    whose name ends in an underscore) write into the caller's x or grad_out.
    """
    BATCH_NORM.input_unmodified(kata, device, (4, 3, 2, 2))


def test_from_scratch(kata, device):
    """implemented from tensor operations, not the built-in batch norm or its backward

    The exercise is the derivation: F.batch_norm and torch.ops.aten.native_batch_norm_backward
    are off limits, in forward and in backward.

    mean, sum, rsqrt, view and broadcasting are all you need.
    """
    BATCH_NORM.from_scratch(kata, device, (4, 3, 2, 2))


def test_vectorized(kata, device):
    """vectorized: no Python loop over channels or samples, in forward or backward

    Every reduction runs over every channel at once: one call over dims (0, 2, 3), then
    broadcasting along dim 1.

    Each statistic is one reduction over the dims (0, 2, 3, ...): μ and σ² in forward, mean(g) and
    mean(g · x̂) in backward, and sums for the parameters; no loop over channels.
    """
    BATCH_NORM.vectorized(kata, device, (2, 2, 3, 3), (16, 32, 8, 8))


def test_backward_by_hand(kata, device):
    """backward computes the gradients itself: no autograd inside it

    No autograd gradient call, no backward call, and no re-run of forward with gradients switched
    back on; the exercise is to derive dL/dx, dL/dw and dL/db and write them with tensor operations.

    From grad_out and the saved x̂ and rstd: sums for weight and bias, the two-mean formula for x.
    """
    BATCH_NORM.backward_by_hand(kata, device, (4, 3, 2, 2))


def test_saves_only_what_backward_needs(kata, device):
    """forward saves only what backward needs: no autograd history, one tensor the size of x

    Saved tensors live until backward: keeping the input's autograd graph (ctx.x = x on an
    input that requires grad) or two copies of an x-sized tensor costs memory for nothing.

    Hand ctx's save_for_backward the x-sized x̂, the per-channel rstd and the weight (or x, the
    channel means and rstd): tensors saved that way carry no graph, unlike one stored as an
    attribute of ctx.
    """
    BATCH_NORM.saves_only_what_backward_needs(kata, device, (4, 3, 2, 2))


def test_forward_matches_torch(kata, device):
    """forward normalizes like F.batch_norm in training: per channel, biased variance

    Each channel is centred by its batch mean and divided by sqrt(var + eps) over every dim
    but 1, var the mean of the squared deviations (divide by m, not m - 1).

    y = (x - mean) * rsqrt(mean((x - mean)²) + eps) * weight + bias, dims = (0, 2, 3, ...).
    """
    BATCH_NORM.forward_matches_torch(kata, device, ((8, 3), (4, 3, 5, 2)), ((8, 3), (4, 3, 2, 2)))


def test_numerically_stable(kata, device):
    """stable in float32 when the input has a large mean (no E[x²] − E[x]² shortcut)

    E[x²] − E[x]² subtracts two huge, nearly equal numbers and loses every significant digit
    in float32 when the mean is large against the spread: at a mean of 1000, the variance of
    values spread by 1 comes out off by some hundredths, or negative.

    Centre first, then average the squares, over each channel: var = mean((x − μ)²).
    """
    BATCH_NORM.numerically_stable(kata, device, (64, 4, 2, 2))


def test_grad_bias(kata, device):
    """grad_bias sums grad_out over every dim but the channel's: (N, H, W)

    Each channel's bias is added at every position of every sample, so its gradient collects
    all of them, not only the batch dim.

    ∂L/∂β_c = Σ dy[n, c, h, w] over n, h and w.
    """
    BATCH_NORM.gradient_of(kata, device, "bias", (4, 3, 2, 5))


def test_grad_weight(kata, device):
    """grad_weight sums grad_out · x̂ over every dim but the channel's

    Each channel's weight scales x̂ at every position of every sample: its gradient is the sum
    of grad_out times x̂ there (x̂, not x: the weight multiplies the normalized value).

    ∂L/∂γ_c = Σ dy · x̂ over n, h and w.
    """
    BATCH_NORM.gradient_of(kata, device, "weight", (4, 3, 2, 5))


def test_grad_x_through_the_weight(kata, device):
    """grad_x goes through the weight: the gradient reaching x̂ is grad_out · weight

    y is x̂ scaled by the weight and shifted by the bias, feature by feature, so the gradient
    reaching x̂ is grad_out times the weight. Here grad_out · weight has no mean and no part
    along x̂ over each channel's elements, so both correction terms vanish and grad_x is that
    gradient times rstd.

    With g = dy · γ: ∂L/∂x = rstd · (g − mean(g) − x̂ · mean(g · x̂)), the means over each channel.
    """
    BATCH_NORM.grad_x_through_the_weight(kata, device, (8, 3))


def test_grad_x_through_the_mean(kata, device):
    """grad_x accounts for the batch mean: a gradient constant over a channel gives zero

    Adding a constant to a channel's values moves its batch mean by the same amount and leaves
    x̂ unchanged, so a gradient of x̂ constant over the channel gives dL/dx = 0: the −mean(g) term.

    With g = dy · γ: ∂L/∂x = (1/σ) (g − mean(g) − x̂ · mean(g · x̂)), the means per channel over n,
    h and w; the mean(g) term is the path through μ.
    """
    BATCH_NORM.grad_x_through_the_mean(kata, device, (8, 3))


def test_grad_x_through_the_variance(kata, device):
    """grad_x accounts for the batch variance: a gradient proportional to x̂ gives zero

    Scaling a channel's deviations scales its variance by the same factor and leaves x̂ unchanged;
    so a gradient of x̂ proportional to x̂ must give (almost) zero, which is the work of the −x̂ ·
    mean(g · x̂) term.

    ∂L/∂x = (1/σ) (g − mean(g) − x̂ · mean(g · x̂)) with g = dy · γ and σ = √(σ² + ε); the x̂ ·
    mean(g · x̂) term is the path through σ².
    """
    BATCH_NORM.grad_x_through_the_variance(kata, device, (8, 3))


def test_backward_eps_inside_sqrt(kata, device):
    """backward uses the same 1/sqrt(var + eps) as forward

    eps sits inside the square root in forward; a backward that recomputes the scale as
    1 / (sqrt(var) + eps) is off wherever a channel's variance is small.

    Save rstd = rsqrt(var + eps) in forward and reuse it in backward.
    """
    BATCH_NORM.backward_eps_inside_sqrt(kata, device, (8, 3))


def test_grad_x_over_n_h_w(kata, device):
    """on (N, C, H, W) the two batch means of grad_x run over N, H and W together

    Every position of every sample shares the channel's statistics, so the mean terms of
    dL/dx average over (N, H, W), exactly as forward's statistics do.

    Both means in ∂L/∂x = (1/σ) (g − mean(g) − x̂ · mean(g · x̂)) run over the m = N·H·W values of a
    channel (dims 0, 2, 3), as in forward.
    """
    BATCH_NORM.gradient_of(kata, device, "input", (4, 3, 2, 5))


def test_zero_weight_elements(kata, device):
    """a weight with elements at zero gives the same output and gradients as torch

    A weight element may be exactly 0 (a residual block's last norm initialized at zero, or
    trained there): the output is the bias there, but x̂ is still defined, and so are the
    gradients. Where x̂ is recovered from the output by dividing by the weight, it is 0/0
    there, and NaN spreads.

    Save x̂ (or x with its statistics) in forward, never the output alone: ∂L/∂γ = Σ dy · x̂
    needs x̂ wherever γ = 0.
    """
    BATCH_NORM.zero_weight_elements(kata, device, (8, 3))


def test_follows_device(kata, device):
    """runs on CUDA: forward and backward create nothing on the CPU

    Every tensor forward or backward creates must live on the input's device.

    Derive every new tensor from x or grad_out (a zeros-like of them), or create it on x's device; a
    count m can stay a Python number.
    """
    BATCH_NORM.follows_device(kata, device, (4, 3, 2, 2))


@pytest.mark.broad
def test_gradcheck(kata, device):
    """torch.autograd.gradcheck passes in float64

    gradcheck compares your backward with finite differences of your forward, element by element;
    the analytic gradient must be the derivative of what forward computes.

    Try gradcheck on batch_norm_train yourself, with small float64 inputs that require grad (it
    needs a forward that computes float64 in float64; one that rounds to float32 anywhere is
    skipped here).

    [your code raised] gradcheck runs your function through autograd, as training does: the
    Function's apply on small float64 inputs that require grad, then backward, over and over on
    the same inputs. Call your function that way yourself, then backward on the sum of its
    output, and read which line raises and what it says.

    [your code raised] An error that a variable needed for gradient computation has been
    modified by an inplace operation means a tensor saved for backward was written into after
    it was saved, by a method whose name ends in an underscore: compute into new tensors.
    """
    BATCH_NORM.gradcheck(kata, device, (5, 3), (3, 2, 2, 2))


@pytest.mark.broad
def test_gradients_match_autograd(kata, device):
    """the gradients of x, weight and bias match autograd through F.batch_norm, float32 and float64

    Your backward must give what autograd gives for the built-in in training mode, on (N, C)
    and (N, C, H, W) inputs.

    grad_x = rstd · (g − mean(g) − x̂ · mean(g · x̂)); grad_w = Σ grad_out · x̂; grad_b = Σ grad_out.
    """
    BATCH_NORM.gradients_match_autograd(kata, device, ((8, 3), (4, 3, 5, 2)))


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """float64 inputs are computed in float64, in forward and in backward, as torch does

    torch computes in float32 only for float16 and bfloat16 inputs; upcasting x or grad_out to
    float32 whatever its dtype, as code written for mixed precision often does, also rounds a
    float64 input or gradient to float32's 7 significant digits, and so does one reduction or one
    saved statistic upcast to float32: the output and every gradient are compared with float64
    autograd to 1e-10.

    compute dtype = float32 for float16/bfloat16 inputs, x.dtype otherwise, in both passes and
    for every gradient (grad_x, grad_weight, grad_bias).
    """
    BATCH_NORM.computes_in_float64(kata, device, (4, 3, 2, 2))


@pytest.mark.parity
def test_noncontiguous_grad_out(kata, device):
    """backward works on a non-contiguous grad_out

    autograd hands backward whatever layout the next operation produced, a channels-last or a
    transposed tensor for example, and view fails on such a tensor.

    Use reshape, or reductions over the dims (0, 2, 3, ...) that accept any layout; never view on
    grad_out.
    """
    BATCH_NORM.noncontiguous_grad_out(kata, device, (4, 3, 2, 5), dims=(0, 3, 2, 1), how="permuted")


@pytest.mark.parity
def test_noncontiguous_input(kata, device):
    """a non-contiguous x works, forward and backward, as F.batch_norm's does

    An activation in another memory layout (channels last, or after a permute) reaches the
    norm with its dims not in the order of its shape, and a view that changes its shape fails
    on that.

    Reduce over the dims (0, 2, 3, ...) as they are, or reshape, which copies when it must; a
    view of x needs a contiguous layout.
    """
    BATCH_NORM.noncontiguous_input(kata, device, (4, 3, 2, 5), dims=(0, 3, 2, 1), how="permuted")


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, device, dtype):
    """half-precision inputs are computed in float32, the gradients returned in their dtype

    float16 keeps 11 significant bits and bfloat16 8: a mean or sum of values far from zero,
    rounded to them, is off by a good part of the spread. On grad_out = 384 + randn (float16) a
    channel's Σ grad_out rounded to float16 is all that is left of m · dy − Σ dy.

    Upcast x, grad_out and the weight to float32, save float32 statistics, and round once at the
    end: y to x's dtype, grad_x to grad_out's dtype, grad_weight and grad_bias to the weight's
    dtype.
    """
    BATCH_NORM.half_precision(kata, device, dtype, (4, 4, 4, 4))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_float32_parameters_with_half_input(kata, device, dtype):
    """a float32 weight and bias with half-precision x: their gradients in float32

    Mixed-precision training keeps its parameters in float32 while activations and their
    gradients are float16 or bfloat16. Each gradient takes the dtype of its own input, as
    autograd through F.batch_norm gives it: the weight's and the bias's in float32, at
    float32's precision, not rounded to x's dtype.

    Compute in float32, then round y and grad_x to x's dtype and each parameter's gradient to
    that parameter's dtype.
    """
    BATCH_NORM.float32_parameters_with_half_input(kata, device, dtype, (4, 4, 4, 4))


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your batch_norm_train and F.batch_norm in training, with backward."""
    shape = (64, 256, 56, 56) if device.type == "cuda" else (16, 64, 32, 32)
    return BATCH_NORM.perf_case(kata, device, shape)
