"""Hidden checks for the RMSNorm-backward kata, compared with autograd through F.rms_norm.

The checks are the backward katas' template (checks.FunctionKata), declared below with RMSNorm's
dims and no bias. Most call the learner's forward and backward directly, with a recording ctx
(checks.call_forward / call_backward): what forward saved can be inspected, and backward runs
where the grader can watch it for autograd. They hand the learner copies of their inputs, so
that what they compare with comes from the inputs they name; test_input_unmodified alone judges
what the learner's code writes into. Special gradients isolate the parts of dL/dx: one
orthogonal to x̂ along each row has no component for the projection term to remove, so it
shows the weight alone; one proportional to x̂ is removed by it entirely. Interview core first,
then torch parity (@pytest.mark.parity): float64 computed in float64, non-contiguous inputs,
an unbatched x of shape (D,), half precision (alone, and beside a float32 weight) and the
eps=None default. Which dtype the
function computes in is dtype policy: the core compares float64 values at float32's tolerance,
and gradcheck, whose finite differences need float64 arithmetic throughout, skips a forward
that rounds to float32 anywhere; test_computes_in_float64 fails a float64 result off from
float64 autograd by more than 1e-10 that also moves in float32's steps.

Half precision is compared with the formula in float64 on the same half inputs, rounded once to
their dtype: what float32 arithmetic gives, within an ulp.

Each property in every mode where it applies (eps=0.05 where eps must show):

    property              with weight                          without (weight None)
    forward               forward_matches_torch                without_weight
    grad_x                grad_x_through_the_weight, _rms      without_weight
    grad_weight           grad_weight (3-D, 4-D), zero_weight  without_weight (None)
    eps inside the sqrt   forward_matches_torch, backward_...  without_weight
    x in place, grad_out  input_unmodified (each float dtype)  input_unmodified
    eps=None default      default_eps                          default_eps
    the RMSNorm module    module                               module
    layouts, dtypes       parity: noncontiguous_input, noncontiguous_grad_out, half_precision,
                          float32_weight_with_half_input, computes_in_float64
    x of shape (D,)       parity: unbatched_input              -
"""

import pytest
import torch
import torch.nn.functional as F

from norm_katas.checks import (
    BUILTIN_NORMS,
    FunctionKata,
    Suite,
    describe_call,
    expect_attributes,
    expect_close,
    expect_grads_close,
    expect_node_of,
    expect_tensor,
    fail,
    grads_of,
    paired,
    shape_of,
)

SUITE = Suite()

RMS_NORM = FunctionKata(
    function="RMSNormFunction",
    wrapper="rms_norm",
    builtin=lambda x, w, b, eps: F.rms_norm(x, x.shape[-1:], w, eps),
    builtin_name="F.rms_norm",
    feature_dim=-1,  # the weight runs along the last dim
    per_feature=False,  # one mean square per row, over the last dim
    constant="along each row",
    forbidden=BUILTIN_NORMS | {
        "_fused_rms_norm_backward", "native_layer_norm_backward", "layer_norm_backward",
        "native_batch_norm_backward", "native_group_norm_backward",
    },
    bias=False,
    weight_optional=True,  # weight=None is RMSNorm(elementwise_affine=False)
)  # fmt: skip


def test_is_an_autograd_function(kata, device):
    """RMSNormFunction is a torch.autograd.Function, and rms_norm goes through it

    The gradient must come from your backward: rms_norm has to call RMSNormFunction.apply,
    so that autograd records your Function in the graph.

    Subclass torch.autograd.Function, with forward and backward as static methods that take
    ctx first; rms_norm hands x, weight and eps to the Function's apply method and gives back
    its result, never calling forward itself.
    """
    RMS_NORM.is_an_autograd_function(kata, device, (2, 3, 8))


def test_backward_returns_a_grad_per_input(kata, device):
    """backward returns (grad_x, grad_weight, None): shapes of x and (D,)

    autograd expects one gradient per input of forward, in order, each shaped like its input;
    eps is a float and takes none.

    Three values in forward's input order: grad_x, grad_weight, then None for eps.
    """
    RMS_NORM.backward_returns_a_grad_per_input(kata, device, (4, 8))


def test_input_unmodified(kata, device):
    """forward leaves x unmodified, and backward leaves grad_out unmodified

    The caller still owns both: autograd may hand the same grad_out to other functions.

    Build new tensors: x times its 1/rms into a fresh tensor, never a multiplication in place,
    and grad_out times the weight into another, never an in-place method (those ending in "_").
    """
    RMS_NORM.input_unmodified(kata, device, (3, 8))


def test_from_scratch(kata, device):
    """implemented from tensor operations, not the built-in rms norm

    The exercise is the derivation: F.rms_norm, torch.ops.aten._fused_rms_norm and its backward
    are off limits, in forward and in backward.

    mean, sum, rsqrt, multiplication and broadcasting are all you need.
    """
    RMS_NORM.from_scratch(kata, device, (3, 8))


def test_vectorized(kata, device):
    """vectorized: no Python loop over rows or elements, in forward or backward

    Every reduction runs over the last dim of all rows at once, and the weight's gradient over
    all rows at once.

    The mean square is one reduction over the last dim in forward; mean(g · x̂) in backward, and
    a sum over every row for the weight; no loop.
    """
    RMS_NORM.vectorized(kata, device, (2, 3, 8), (16, 12, 32))


def test_backward_by_hand(kata, device):
    """backward computes the gradients itself: no autograd inside it

    Call neither autograd's grad function nor a tensor's backward method, and do not re-run
    forward under enable_grad. The exercise is to derive dL/dx and dL/dw and to write them as
    tensor operations.

    From grad_out and the saved x̂ and rstd: a sum for the weight, the projection formula for x.
    """
    RMS_NORM.backward_by_hand(kata, device, (3, 8))


def test_saves_only_what_backward_needs(kata, device):
    """forward saves only what backward needs: no autograd history, one tensor the size of x

    Saved tensors live until backward: keeping the input's autograd graph (x stored as a plain
    attribute of ctx, when it requires grad) or two x-sized tensors costs memory for nothing.

    Hand x̂, rstd and the weight to ctx's save_for_backward (or x, rstd and the weight): one
    tensor the size of x, plus a number per row and per feature.
    """
    RMS_NORM.saves_only_what_backward_needs(kata, device, (4, 6, 8))


def test_forward_matches_torch(kata, device):
    """forward normalizes like F.rms_norm: the mean of squares, eps inside the square root

    Each row is divided by its root mean square √(mean(x²) + ε), with no mean subtracted, then
    scaled by the weight.

    y = x / √(mean(x²) + ε) · w, the mean over the last dim.
    """
    RMS_NORM.forward_matches_torch(kata, device, ((4, 8), (2, 3, 16)), ((4, 8),))


def test_grad_weight(kata, device):
    """grad_weight sums grad_out · x̂ over every row: all dims but the last

    Each weight scales x̂ at every position of every sample: its gradient is the sum of
    grad_out times x̂ there (x̂, not x: the weight multiplies the normalized value), over the
    batch and sequence dims, not only dim 0.

    ∂L/∂w = Σ dy · x̂ over every row (all dims but the last).
    """
    for shape in ((3, 4, 8), (2, 3, 4, 8)):  # (B, T, D), and (B, H, T, Dh) as in QK-norm
        RMS_NORM.gradient_of(kata, device, "weight", shape)


def test_grad_x_through_the_weight(kata, device):
    """grad_x goes through the weight: the gradient reaching x̂ is grad_out · weight

    y is x̂ times the weight, so the gradient reaching x̂ is grad_out scaled by the weight, feature
    by feature. Here grad_out · weight is orthogonal to x̂ along each row, so the projection term
    vanishes and dL/dx is that gradient times 1/rms.

    With g = dy · w: ∂L/∂x = r · (g − x̂ · mean(g · x̂)), r = 1/√(mean(x²) + ε).
    """
    # eps=1e-10: the projection term then vanishes whatever the eps in backward.
    RMS_NORM.grad_x_through_the_weight(kata, device, (4, 8), eps=1e-10)


def test_grad_x_through_the_rms(kata, device):
    """grad_x accounts for the rms: a gradient proportional to x̂, row by row, gives zero

    Scaling a row scales its root mean square by the same factor and leaves x̂ unchanged. So a
    gradient of x̂ proportional to x̂ in each row must give (almost) zero: that is the
    projection term −x̂ · mean(g · x̂), the path through the rms, which every element of the
    row moves; the mean is the row's own.

    ∂L/∂x = r · (g − x̂ · mean(g · x̂)) with g = dy · w and r = 1/√(mean(x²) + ε).
    """
    # eps=1e-10: a gradient along x̂ then gives zero to 1e-10, whatever the eps in backward.
    # A factor of its own per row: a projection averaged over every element, not each row's,
    # would cancel one factor for all.
    x, w, b = RMS_NORM.inputs(4, 8, device=device)
    factor = torch.randn(4, 1, device=device) + 2
    RMS_NORM.grad_x_along_x_hat(kata, x, w, b, factor, eps=1e-10)


def test_backward_eps_inside_sqrt(kata, device):
    """backward uses the same 1/sqrt(mean(x²) + eps) as forward

    eps sits inside the square root in forward; a backward that recomputes the scale as
    1 / (sqrt(mean(x²)) + eps) is off wherever eps is not negligible.

    Save rstd = 1/√(mean(x²) + ε) in forward and reuse it in backward.
    """
    RMS_NORM.backward_eps_inside_sqrt(kata, device, (4, 8))


def test_zero_weight_elements(kata, device):
    """a weight with elements at zero gives the same output and gradients as F.rms_norm

    A weight element may be exactly 0 (a scale initialized at zero, or trained there): the
    output is 0 there, but x̂ is still defined, and so are both gradients. Where x̂ is recovered
    from the output by dividing by the weight, it is 0/0 there, and NaN spreads through the
    row's projection term.

    Save x̂ (or x) and 1/rms in forward, never the output alone: ∂L/∂w = Σ dy · x̂ needs x̂
    wherever w = 0.
    """
    RMS_NORM.zero_weight_elements(kata, device, (3, 4, 8))


def test_without_weight(kata, device):
    """weight=None (elementwise_affine=False): y is x̂, and grad_weight is None

    torch's RMSNorm has a weight only when elementwise_affine is true: without one forward
    returns x̂ itself, and backward returns None for the weight, which was not a tensor.

    y = x̂ = x / √(mean(x²) + ε); ∂L/∂x = r · (dy − x̂ · mean(dy · x̂)).
    """
    RMS_NORM.without_weight(kata, device, (3, 8))


def test_module(kata, device):
    """RMSNorm(normalized_shape, eps=None, elementwise_affine=True) is nn.RMSNorm, through rms_norm

    The module is torch.nn.RMSNorm's drop-in: same arguments and attributes, a weight of ones
    (or None without elementwise_affine), the same state_dict; its forward goes through your
    Function, so that your backward computes the gradients.

    Keep normalized_shape as a tuple, register the weight as a parameter of ones (or register
    None), and hand x, the module's weight and its eps to your Function.
    """
    for kwargs in ({}, {"elementwise_affine": False}):
        given = describe_call("RMSNorm", 8, **kwargs)
        affine = kwargs.get("elementwise_affine", True)
        fresh = kata.RMSNorm(8, **kwargs)
        expect_attributes(fresh, given, normalized_shape=(8,), eps=None, elementwise_affine=affine)
        if affine and not torch.equal(fresh.weight, torch.ones(8)):
            fail(f"{given}.weight should start as ones, like torch.nn.RMSNorm's.")
        if not affine and getattr(fresh, "weight", None) is not None:
            fail(f"{given}.weight should be None, as torch.nn.RMSNorm's is without a weight.")
    for shape in ((8,), [8]):  # torch.nn.RMSNorm takes a sequence of sizes too
        given = describe_call("RMSNorm", shape)
        expect_attributes(kata.RMSNorm(shape), given, normalized_shape=(8,))
    # eps given: the eps=None default is torch parity (test_default_eps)
    for kwargs in ({"eps": 1e-5}, {"eps": 0.05}, {"eps": 1e-5, "elementwise_affine": False}):
        given = describe_call("RMSNorm", 8, **kwargs)
        mine, ref = paired(kata, "RMSNorm", 8, **kwargs)
        mine, ref = mine.to(device), ref.to(device)
        x = torch.randn(3, 4, 8, device=device) * 0.1 + 0.5
        node = mine(x.clone().requires_grad_()).grad_fn
        returns = "rms_norm(x, self.weight, self.eps)"
        expect_node_of(
            node, kata.RMSNormFunction, name="RMSNormFunction", given=f"{given}(x)", returns=returns
        )
        # yours on a copy of grad_out (grads_of copies x): torch's gets it as it was made
        grad_out = torch.randn_like(x)
        have = grads_of(mine, x, grad_out.clone())
        want = grads_of(ref, x, grad_out)
        expect_grads_close(have, want, given=f"{given} on x {shape_of(x)}")


def test_follows_device(kata, device):
    """runs on CUDA: forward and backward create nothing on the CPU

    Every tensor forward or backward creates must live on the input's device.

    Make each new tensor like an existing one (the zeros_like family) or on x's device, and keep
    sizes and counts as Python numbers, not tensors made on the CPU.
    """
    RMS_NORM.follows_device(kata, device, (3, 8))


@pytest.mark.broad
def test_gradcheck(kata, device):
    """torch.autograd.gradcheck passes in float64

    gradcheck compares your backward against finite differences of your forward, element by
    element: the analytic gradient must be the derivative of what forward computes.

    Run autograd's gradcheck yourself on rms_norm, given a small float64 x and weight that
    require grad. It needs a forward that keeps float64 in float64; a forward that rounds to
    float32 anywhere is skipped here.

    [your code raised] gradcheck runs your function through autograd, as training does: the
    Function's apply on small float64 inputs that require grad, then backward, over and over on
    the same inputs. Call your function that way yourself, then backward on the sum of its
    output, and read which line raises and what it says.

    [your code raised] An error that a variable needed for gradient computation has been
    modified by an inplace operation means a tensor saved for backward was written into after
    it was saved, by a method whose name ends in an underscore: compute into new tensors.
    """
    RMS_NORM.gradcheck(kata, device, (3, 5))


@pytest.mark.broad
def test_gradients_match_autograd(kata, device):
    """the gradients of x and weight match autograd through F.rms_norm, float32 and float64

    Your backward must give what autograd gives for the built-in, on any shape.

    grad_x = rstd · (g − x̂ · mean(g · x̂)) with g = grad_out · w; grad_w = Σ grad_out · x̂.
    """
    RMS_NORM.gradients_match_autograd(kata, device, ((4, 8), (2, 3, 16), (2, 2, 3, 8)))


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """float64 inputs are computed in float64, in forward and in backward, as torch does

    torch computes in float32 only for float16 and bfloat16 inputs. Casting x or grad_out to
    float32 whatever its dtype (as LLaMA's RMSNorm does) also rounds a float64 input or
    gradient to float32's 7 significant digits, and so does one reduction or one saved statistic
    upcast to float32: the output and every gradient are compared with float64 autograd to 1e-10.

    The compute dtype is float32 for float16 and bfloat16 inputs and x's own dtype otherwise, in
    forward and in backward alike, for grad_weight's sum as for grad_x.
    """
    RMS_NORM.computes_in_float64(kata, device, (4, 8))


@pytest.mark.parity
def test_noncontiguous_grad_out(kata, device):
    """a non-contiguous grad_out works

    autograd hands backward whatever layout the next operation produced, such as the transpose
    of a contiguous tensor, and a view that changes its shape fails on that.

    Flatten with reshape, which copies when it must, or reduce over the dims as they are; a view
    of grad_out needs a contiguous layout.
    """
    RMS_NORM.noncontiguous_grad_out(kata, device, (2, 6, 8), dims=(0, 2, 1), how="transposed")


@pytest.mark.parity
def test_noncontiguous_input(kata, device):
    """a non-contiguous x works, forward and backward, as F.rms_norm's does

    An activation after a transpose (heads moved, a sequence-first layout) reaches the norm
    with its last dim not the innermost in memory, and a view that changes its shape fails on
    that.

    Reduce over the last dim of x as it is, or flatten with reshape, which copies when it must;
    a view of x needs a contiguous layout.
    """
    RMS_NORM.noncontiguous_input(kata, device, (2, 6, 8), dims=(0, 2, 1), how="transposed")


@pytest.mark.parity
def test_unbatched_input(kata, device):
    """an x of shape (D,) works forward and backward: a sum over dims () reduces every dim

    x is (*, D), and * may be no dims at all, as F.rms_norm allows: grad_weight is then the
    row's own dy · x̂, still of shape (D,). The leading dims of such an x are the empty tuple, and
    torch takes a sum over an empty tuple of dims as a sum over every dim, not over none: the
    gradient comes out as a scalar, which autograd rejects.

    ∂L/∂γ = Σ dy · x̂ over the rows of x seen as (−1, D), where a 1-D x is one row; or over
    the leading dims only when there are some.

    [out of range] An x of shape (D,) has one dim, the last: there is no second-to-last dim to
    read, nor leading dims to flatten, in forward or in backward.

    [out of range] Take the rows as x reshaped to (−1, D), where a 1-D x is one row of D, and
    give each result the shape of x again.
    """
    RMS_NORM.unbatched(kata, device, (8,))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, device, dtype):
    """half-precision inputs are computed in float32, the gradients returned in their dtype

    float16 keeps 11 significant bits and bfloat16 8, and float16's largest value is 65504: on
    x = 384 + randn (float16) the squares overflow, and on grad_out = 384 + randn the mean of
    g · x̂, rounded to half, shifts every element of grad_x.

    Upcast x, grad_out and the weight to float32, save float32 statistics, and round once at
    the end: y to x's dtype, grad_x to grad_out's, the weight's gradient to its dtype.
    """
    RMS_NORM.half_precision(kata, device, dtype, (4, 64))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_float32_weight_with_half_input(kata, device, dtype):
    """a float32 weight with half-precision x: y and grad_x in x's dtype, grad_weight in float32

    Mixed-precision training keeps its parameters in float32 while activations and their
    gradients are float16 or bfloat16. Each gradient takes the dtype of its own input, as
    autograd through F.rms_norm gives it: the weight's in float32, at float32's precision, not
    rounded to x's dtype.

    Compute in float32, then round y and grad_x to x's dtype and the weight's gradient to the
    weight's dtype.
    """
    RMS_NORM.float32_parameters_with_half_input(kata, device, dtype, (4, 64))


@pytest.mark.parity
def test_default_eps(kata, device):
    """eps=None, and only None, means the machine epsilon of the dtype computed in

    torch.nn.RMSNorm's default eps is None, which is torch.finfo of the computation dtype: about
    1.2e-7 for float32 and for half inputs, which are computed in float32, and 2.2e-16 for
    float64. It shows on rows whose mean square is that small. (torch before 2.7 took the half
    dtype's own eps; the contract follows torch since.) An eps of 0.0 is no eps at all: torch
    divides by the plain root mean square.

    When eps is None, use the eps of float32 for float16, bfloat16 and float32 inputs and the
    eps of float64 for float64 inputs. Only None means the default: an eps of 0.0 is a value,
    and stays 0.
    """
    for dtype, scale in ((torch.float32, 3e-4), (torch.float64, 1e-8)):
        x = torch.randn(4, 8, dtype=dtype, device=device) * scale
        w = torch.randn(8, dtype=dtype, device=device) + 1
        given = f"rms_norm(x, weight) on x {shape_of(x)} of scale {scale:g}"
        y = expect_tensor(kata.rms_norm(x.clone(), w), "rms_norm")  # a copy: x stays as made
        expect_close(y, F.rms_norm(x, (8,), w, None), given=given)
        mine, ref = paired(kata, "RMSNorm", 8)
        mine, ref = mine.to(device, dtype), ref.to(device, dtype)
        given = f"RMSNorm(8) on x {shape_of(x)} of scale {scale:g}"
        expect_close(expect_tensor(mine(x.clone()), "RMSNorm"), ref(x).detach(), given=given)
    # eps=0.0 given: no eps, where eps=None would add float32's (rows of mean square ~1e-7).
    x = torch.randn(4, 8, device=device) * 3e-4
    w = torch.randn(8, device=device) + 1
    given = f"rms_norm(x, weight, eps=0.0) on x {shape_of(x)} of scale 3e-4"
    y = expect_tensor(kata.rms_norm(x.clone(), w, 0.0), "rms_norm")
    expect_close(y, F.rms_norm(x, (8,), w, 0.0), given=given)
    # Half inputs: compared with the formula, not F.rms_norm, whose default differs by release.
    eps = torch.finfo(torch.float32).eps
    for dtype in (torch.float16, torch.bfloat16):
        x = (torch.randn(4, 8, device=device) * 3e-4).to(dtype)
        w = (torch.randn(8, device=device) + 1).to(dtype)
        x64 = x.double()
        x_hat = x64 * torch.rsqrt(x64.square().mean(-1, keepdim=True) + eps)
        given = f"rms_norm(x, weight) on x {shape_of(x)} of scale 3e-4"
        y = expect_tensor(kata.rms_norm(x.clone(), w), "rms_norm")
        expect_close(y, (x_hat * w.double()).to(dtype), given=given)
        mine = kata.RMSNorm(8).to(device, dtype)
        given = f"RMSNorm(8) on x {shape_of(x)} of scale 3e-4"
        expect_close(expect_tensor(mine(x.clone()), "RMSNorm"), x_hat.to(dtype), given=given)


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your rms_norm and F.rms_norm, forward and backward."""
    shape = (8192, 4096) if device.type == "cuda" else (2048, 1024)
    return RMS_NORM.perf_case(kata, device, shape)
