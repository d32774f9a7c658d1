"""Hidden checks for the LayerNorm-backward kata, compared with autograd through F.layer_norm.

The checks are the backward katas' template (checks.FunctionKata), declared below with
LayerNorm's dims. Most call the learner's forward and backward directly, with a recording ctx
(checks.call_forward / call_backward): what forward saved can be inspected, and backward
runs where the grader can watch it for autograd. Special gradients isolate the two terms of
dL/dx: a gradient constant along each row reaches x only through the mean, one proportional
to x̂ only through the variance. Interview core first, then torch parity (@pytest.mark.parity):
float64 computed in float64, non-contiguous inputs, an unbatched x of shape (D,) and half
precision. Which dtype the function computes in is dtype policy: the core compares float64
values at float32's tolerance, and gradcheck, which needs float64 arithmetic, skips a forward
that computes in float32.

Half precision is compared with the formula in float64 on the same half inputs, rounded once
to their dtype: what float32 arithmetic gives, within an ulp. Not with torch's CPU autograd,
whose kernel rounds the saved mean and rstd to the input's dtype (its CUDA kernel keeps them
in float32), which the half-precision check's inputs expose.

Each core property in every mode where it applies: forward and backward called directly, and
through autograd (the wrapper's Function.apply). eps=0.05 or 0.1 on small inputs where eps must
show:

    property                   forward (direct)       backward (direct)         via autograd
    biased stats, eps in sqrt  forward_matches_torch  backward_eps_inside_sqrt  wrapper_passes_eps
    grad_x: weight, mean, var  -                      grad_x_through_the_*      gradcheck
    weight elements at 0       -                      zero_weight_elements      -
    grad_w, grad_b over rows   -                      grad_weight, grad_bias,   gradcheck
                                                      gradients_match
    by hand, from scratch      from_scratch           backward_by_hand          is_an_autograd_fn
    saved tensors              saves_only_what_...    -                         saves_only_...
    float64 / half / layout    parity: computes_in_float64, half_precision, noncontiguous_grad_out
    x (D,), one row            parity: unbatched_input (forward and backward, direct)
"""

import pytest
import torch
import torch.nn.functional as F

from norm_katas.checks import BUILTIN_NORMS, FunctionKata, Suite

SUITE = Suite()

LAYER_NORM = FunctionKata(
    function="LayerNormFunction",
    wrapper="layer_norm",
    builtin=lambda x, w, b, eps: F.layer_norm(x, x.shape[-1:], w, b, eps),
    builtin_name="F.layer_norm",
    feature_dim=-1,  # weight and bias run along the last dim
    per_feature=False,  # one mean and variance per row, over the last dim
    constant="along each row",
    forbidden=BUILTIN_NORMS | {
        "native_layer_norm_backward", "layer_norm_backward", "native_batch_norm_backward",
        "native_group_norm_backward", "_fused_rms_norm_backward",
    },
)  # fmt: skip


def test_is_an_autograd_function(kata, device):
    """LayerNormFunction is a torch.autograd.Function, and layer_norm goes through it

    The gradient must come from your backward: layer_norm has to call
    LayerNormFunction.apply, so that autograd records your Function in the graph.

    Subclass torch.autograd.Function, with forward and backward as static methods that take
    ctx first; layer_norm hands x, weight, bias and eps to the Function's apply method and gives
    back its result, never calling forward itself.
    """
    LAYER_NORM.is_an_autograd_function(kata, device, (2, 3, 8))


def test_wrapper_passes_eps(kata, device):
    """layer_norm passes eps on to LayerNormFunction, and its eps defaults to 1e-5

    layer_norm(x, weight, bias) must normalize with eps=1e-5, as the built-in does, and
    layer_norm(x, weight, bias, eps) with the eps it is given.

    The wrapper's own eps argument, defaulting to 1e-5, goes on to the Function's apply as its
    last input, untouched: no constant of the wrapper's own in its place.
    """
    LAYER_NORM.wrapper_passes_eps(kata, device, (4, 8))


def test_backward_returns_a_grad_per_input(kata, device):
    """backward returns (grad_x, grad_weight, grad_bias, None): shapes of x, (D,), (D,)

    autograd expects one gradient per input of forward, in order, each shaped like its input;
    eps is a float and takes none.

    Four values in forward's input order: grad_x, grad_weight and grad_bias, then None for eps.
    """
    LAYER_NORM.backward_returns_a_grad_per_input(kata, device, (4, 8))


def test_input_unmodified(kata, device):
    """forward leaves x unmodified, and backward leaves grad_out unmodified

    The caller still owns both: autograd may hand the same grad_out to other functions.

    Build new tensors: x minus its mean into a fresh tensor, never a subtraction in place, and
    grad_out times the weight into another, never an in-place method (those ending in "_").
    """
    LAYER_NORM.input_unmodified(kata, device, (3, 8))


def test_from_scratch(kata, device):
    """implemented from tensor operations, not the built-in layer norm or its backward

    The exercise is the derivation: F.layer_norm and torch.ops.aten.native_layer_norm_backward
    are off limits, in forward and in backward.

    mean, sum, rsqrt, multiplication and broadcasting are all you need.
    """
    LAYER_NORM.from_scratch(kata, device, (3, 8))


def test_vectorized(kata, device):
    """vectorized: no Python loop over rows or elements, in forward or backward

    Every reduction runs over the last dim of all rows at once, and the weight and bias
    gradients over all rows at once.

    μ and σ² are one reduction over the last dim in forward; mean(g) and mean(g · x̂) in backward,
    and a sum over every row for the parameters; no loop.
    """
    LAYER_NORM.vectorized(kata, device, (2, 3, 8), (16, 12, 32))


def test_backward_by_hand(kata, device):
    """backward computes the gradients itself: no autograd inside it

    Call neither autograd's grad function nor a tensor's backward method, and do not re-run
    forward under enable_grad. The exercise is to derive dL/dx, dL/dw and dL/db and to write
    them as tensor operations.

    From grad_out and the saved x̂ and rstd: sums for weight and bias, the two-mean formula for x.
    """
    LAYER_NORM.backward_by_hand(kata, device, (3, 8))


def test_saves_only_what_backward_needs(kata, device):
    """forward saves only what backward needs: no autograd history, one tensor the size of x

    Saved tensors live until backward: keeping the input's autograd graph (x stored as a plain
    attribute of ctx, when it requires grad) or two x-sized tensors costs memory for nothing.

    Hand x̂, rstd and the weight to ctx's save_for_backward (or x, the row means and rstd): one
    tensor the size of x, plus a number or two per row and per feature.
    """
    LAYER_NORM.saves_only_what_backward_needs(kata, device, (4, 6, 8))


def test_forward_matches_torch(kata, device):
    """forward normalizes like F.layer_norm: the biased variance, eps inside the square root

    Each row is centred by its mean and divided by √(var + ε), var the mean of the squared
    deviations (divide by D, not D − 1), then scaled and shifted.

    y = (x − μ) / √(σ² + ε) · γ + β, with μ the mean of the row and σ² the mean of (x − μ)²,
    both over the last dim.
    """
    LAYER_NORM.forward_matches_torch(kata, device, ((4, 8), (2, 3, 16)), ((4, 8),))


def test_numerically_stable(kata, device):
    """stable in float32 when the input has a large mean (no E[x²] − E[x]² shortcut)

    E[x²] − E[x]² subtracts two huge, nearly equal numbers and loses every significant digit
    in float32 when the mean is large against the spread: at a mean of 1000, the variance of
    values spread by 1 comes out off by some hundredths, or negative.

    Centre first, then average the squares, over each row: var = mean((x − μ)²).
    """
    LAYER_NORM.numerically_stable(kata, device, (4, 256))


def test_grad_bias(kata, device):
    """grad_bias sums grad_out over every row: all dims but the last

    The same bias is added at every position of every sample, so its gradient collects them
    all: over the batch and sequence dims, not only dim 0.

    ∂L/∂β = Σ dy over every row (all dims but the last).
    """
    LAYER_NORM.gradient_of(kata, device, "bias", (3, 4, 8))


def test_grad_weight(kata, device):
    """grad_weight sums grad_out · x̂ over every row: all dims but the last

    Each weight scales x̂ at every position of every sample: its gradient is the sum of
    grad_out times x̂ there (x̂, not x: the weight multiplies the normalized value).

    ∂L/∂γ = Σ dy · x̂ over every row (all dims but the last).
    """
    LAYER_NORM.gradient_of(kata, device, "weight", (3, 4, 8))


def test_grad_x_through_the_weight(kata, device):
    """grad_x goes through the weight: the gradient reaching x̂ is grad_out · weight

    y is x̂ scaled by the weight and shifted by the bias, feature by feature, so the gradient
    reaching x̂ is grad_out times the weight. Here grad_out · weight has no mean and no part
    along x̂ over each row's elements, so both correction terms vanish and grad_x is that
    gradient times rstd.

    With g = dy · γ: ∂L/∂x = rstd · (g − mean(g) − x̂ · mean(g · x̂)), the means over each row.
    """
    LAYER_NORM.grad_x_through_the_weight(kata, device, (4, 8))


def test_grad_x_through_the_mean(kata, device):
    """grad_x accounts for the mean: a gradient constant along a row gives zero

    Adding a constant to a row moves its mean by the same amount and leaves x̂ unchanged, so a
    gradient of x̂ that is constant along the row must give dL/dx = 0: that is the −mean(g) term.

    With g = dy · γ: ∂L/∂x = (1/σ) (g − mean(g) − x̂ · mean(g · x̂)), the means over the last dim;
    the mean(g) term is the path through μ.
    """
    LAYER_NORM.grad_x_through_the_mean(kata, device, (4, 8))


def test_grad_x_through_the_variance(kata, device):
    """grad_x accounts for the variance: a gradient proportional to x̂ gives zero

    Scaling a row's deviations scales its standard deviation by the same factor and leaves x̂
    unchanged. So a gradient of x̂ proportional to x̂ must give (almost) zero: that is the
    −x̂ · mean(g · x̂) term.

    ∂L/∂x = (1/σ) (g − mean(g) − x̂ · mean(g · x̂)) with g = dy · γ and σ = √(σ² + ε); the x̂ ·
    mean(g · x̂) term is the path through σ².
    """
    LAYER_NORM.grad_x_through_the_variance(kata, device, (4, 8))


def test_backward_eps_inside_sqrt(kata, device):
    """backward uses the same 1/sqrt(var + eps) as forward

    eps sits inside the square root in forward; a backward that recomputes the scale as
    1 / (sqrt(var) + eps) is off wherever the variance is small.

    Save rstd = 1/√(σ² + ε) in forward and reuse it in backward.
    """
    LAYER_NORM.backward_eps_inside_sqrt(kata, device, (4, 8))


def test_zero_weight_elements(kata, device):
    """a weight with elements at zero gives the same output and gradients as torch

    A weight element may be exactly 0 (a residual block's last norm initialized at zero, or
    trained there): the output is the bias there, but x̂ is still defined, and so are the
    gradients. Where x̂ is recovered from the output by dividing by the weight, it is 0/0
    there, and NaN spreads.

    Save x̂ (or x with its statistics) in forward, never the output alone: ∂L/∂γ = Σ dy · x̂
    needs x̂ wherever γ = 0.
    """
    LAYER_NORM.zero_weight_elements(kata, device, (4, 8))


def test_follows_device(kata, device):
    """runs on CUDA: forward and backward create nothing on the CPU

    Every tensor forward or backward creates must live on the input's device.

    Make each new tensor like an existing one (the zeros_like family) or on x's device, and keep
    sizes and counts as Python numbers, not tensors made on the CPU.
    """
    LAYER_NORM.follows_device(kata, device, (3, 8))


@pytest.mark.broad
def test_gradcheck(kata, device):
    """torch.autograd.gradcheck passes in float64

    gradcheck compares your backward against finite differences of your forward, element by
    element: the analytic gradient must be the derivative of what forward computes.

    Run autograd's gradcheck yourself on layer_norm, given a small float64 x, weight and bias
    that require grad. It needs a forward that keeps float64 in float64; a forward that rounds
    to float32 anywhere is skipped here.

    [your code raised] gradcheck runs your function through autograd, as training does: the
    Function's apply on small float64 inputs that require grad, then backward, over and over on
    the same inputs. Call your function that way yourself, then backward on the sum of its
    output, and read which line raises and what it says.

    [your code raised] An error that a variable needed for gradient computation has been
    modified by an inplace operation means a tensor saved for backward was written into after
    it was saved, by a method whose name ends in an underscore: compute into new tensors.
    """
    LAYER_NORM.gradcheck(kata, device, (3, 5))


@pytest.mark.broad
def test_gradients_match_autograd(kata, device):
    """the gradients of x, weight and bias match autograd through F.layer_norm, float32 and float64

    Your backward must give what autograd gives for the built-in, on any shape.

    grad_x = rstd · (g − mean(g) − x̂ · mean(g · x̂)); grad_w = Σ grad_out · x̂; grad_b = Σ grad_out.
    """
    LAYER_NORM.gradients_match_autograd(kata, device, ((4, 8), (2, 3, 16)))


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """float64 inputs are computed in float64, in forward and in backward, as torch does

    torch computes in float32 only for float16 and bfloat16 inputs. Casting x or grad_out to
    float32 whatever its dtype (as Triton's fused LayerNorm tutorial does) also rounds a float64
    input or gradient to float32's 7 significant digits, and so does one reduction or one saved
    statistic upcast to float32: the output and every gradient are compared with float64
    autograd to 1e-10.

    The compute dtype is float32 for float16 and bfloat16 inputs and x's own dtype otherwise, in
    forward and in backward alike, for every gradient (grad_x, grad_weight, grad_bias).
    """
    LAYER_NORM.computes_in_float64(kata, device, (4, 8))


@pytest.mark.parity
def test_noncontiguous_grad_out(kata, device):
    """a non-contiguous grad_out works

    autograd hands backward whatever layout the next operation produced, such as the transpose
    of a contiguous tensor, and a view that changes its shape fails on that.

    Flatten with reshape, which copies when it must, or reduce over the dims as they are; a view
    of grad_out needs a contiguous layout.
    """
    LAYER_NORM.noncontiguous_grad_out(kata, device, (2, 6, 8), dims=(0, 2, 1), how="transposed")


@pytest.mark.parity
def test_noncontiguous_input(kata, device):
    """a non-contiguous x works, forward and backward, as F.layer_norm's does

    An activation after a transpose (heads moved, a sequence-first layout) reaches the norm
    with its last dim not the innermost in memory, and a view that changes its shape fails on
    that.

    Reduce over the last dim of x as it is, or flatten with reshape, which copies when it must;
    a view of x needs a contiguous layout.
    """
    LAYER_NORM.noncontiguous_input(kata, device, (2, 6, 8), dims=(0, 2, 1), how="transposed")


@pytest.mark.parity
def test_unbatched_input(kata, device):
    """an x of shape (D,) works forward and backward: a sum over dims () reduces every dim

    x is (*, D), and * may be no dims at all, as F.layer_norm allows: grad_weight and grad_bias
    are then the row's own dy · x̂ and dy, still of shape (D,). The leading dims of such an x are
    the empty tuple, and torch takes a sum over an empty tuple of dims as a sum over every dim,
    not over none: the gradients come out as scalars.

    ∂L/∂γ = Σ dy · x̂ and ∂L/∂β = Σ dy over the rows of x seen as (−1, D), where a 1-D x is
    one row; or over the leading dims only when there are some.

    [out of range] An x of shape (D,) has one dim, the last: there is no second-to-last dim to
    read, nor leading dims to flatten, in forward or in backward.

    [out of range] Take the rows as x reshaped to (−1, D), where a 1-D x is one row of D, and
    give each result the shape of x again.
    """
    LAYER_NORM.unbatched(kata, device, (8,))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, device, dtype):
    """half-precision inputs are computed in float32, the gradients returned in their dtype

    float16 keeps 11 significant bits and bfloat16 8: a mean of values far from zero, rounded to
    them, is off by a good part of the spread. On x = 384 + randn (float16) a row mean in float16
    shifts every x̂; on grad_out = 384 + randn the mean of g does the same to grad_x.

    Upcast x, grad_out and the weight to float32, save float32 statistics, and round once at
    the end: y to x's dtype, grad_x to grad_out's, each parameter's gradient to its dtype.
    """
    LAYER_NORM.half_precision(kata, device, dtype, (4, 64))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_float32_parameters_with_half_input(kata, device, dtype):
    """a float32 weight and bias with half-precision x: their gradients in float32

    Mixed-precision training keeps its parameters in float32 while activations and their
    gradients are float16 or bfloat16. Each gradient takes the dtype of its own input, as
    autograd through F.layer_norm gives it: the weight's and the bias's in float32, at
    float32's precision, not rounded to x's dtype.

    Compute in float32, then round y and grad_x to x's dtype and each parameter's gradient to
    that parameter's dtype.
    """
    LAYER_NORM.float32_parameters_with_half_input(kata, device, dtype, (4, 64))


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your layer_norm and F.layer_norm, forward and backward."""
    shape = (8192, 4096) if device.type == "cuda" else (2048, 1024)
    return LAYER_NORM.perf_case(kata, device, shape)
