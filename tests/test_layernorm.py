"""Hidden checks for the LayerNorm kata, each compared with torch.nn.LayerNorm.

Interview core first, then torch parity (@pytest.mark.parity): float64 computed in float64,
bias=False, the shape error, half precision and an empty batch. Which dtype a layer computes in
is dtype policy, so the core compares float64 outputs at float32's tolerance: a LayerNorm that
computes in float32 whatever it is given (fairseq's Fp32LayerNorm) solves the core.
"""

import math
from functools import partial

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from norm_katas.checks import (
    BUILTIN_NORM_MODULES,
    BUILTIN_NORMS,
    HALF_OFFSET,
    PerfCase,
    Suite,
    describe_call,
    expect_affine_state_dropped,
    expect_arguments_kept,
    expect_close,
    expect_eps_in_the_root,
    expect_float64_arithmetic,
    expect_follows_device,
    expect_from_scratch,
    expect_input_unmodified,
    expect_no_weight_and_bias,
    expect_output_like_input,
    expect_registered_state,
    expect_rejects_shapes,
    expect_rounded_once,
    expect_same_grads_in_float64,
    expect_same_parameters,
    expect_scale_free,
    expect_stable_under_shift,
    expect_state_dict_round_trip,
    expect_tensor,
    expect_unscaled,
    expect_vectorized_rows,
    fail,
    fail_for,
    paired,
    place_torch_state,
    shape_of,
    torch_initialised,
    values_close,
    without_affine,
)

SUITE = Suite()


def test_parameters(kata):
    """weight, bias and the default eps are torch's: parameters named, shaped and initialised alike

    Learnable tensors must be nn.Parameter so that the optimizer, state_dict and .to() see them.

    weight: an nn.Parameter of ones, bias: one of zeros, both of shape normalized_shape; an int
    normalized_shape becomes the tuple (n,), and eps defaults to 1e-5, as torch's.

    [initial] The scale starts at one and the shift at zero, as torch's, so that an untrained
    layer passes the normalized input through unchanged; training moves them from there.

    [initial] weight₀ = 1 and bias₀ = 0 in every one of the normalized_shape elements, the same in
    every run, never random.
    """
    for args in ((8,), ((3, 4),)):
        expect_same_parameters(kata.LayerNorm(*args), nn.LayerNorm(*args), given=f"LayerNorm{args}")
    for arg, want in ((8, (8,)), ([3, 4], (3, 4))):
        have = getattr(kata.LayerNorm(arg), "normalized_shape", "missing")
        # torch.Size is a tuple (Restormer and apex keep normalized_shape as one): equal is fine.
        if not isinstance(have, tuple) or tuple(have) != want:
            fail(
                f"LayerNorm({arg!r}).normalized_shape should be the tuple {want}, got {have!r}: "
                "turn an int into a 1-tuple and a list into a tuple, like torch."
            )
    expect_arguments_kept(kata.LayerNorm(8), "LayerNorm(8)", {"eps": 1e-5})  # torch's default


def test_state_dict_round_trip(kata):
    """state_dict loads from nn.LayerNorm and into it, both ways

    A checkpoint trained with nn.LayerNorm must load into your module, and yours into nn.LayerNorm.

    Use torch's names and shapes: weight and bias, each of shape normalized_shape.
    """
    expect_state_dict_round_trip(
        kata.LayerNorm((3, 8)), nn.LayerNorm((3, 8)), given="LayerNorm((3, 8))"
    )


def test_output_like_input(kata, device):
    """output has the input's shape, dtype and device

    Normalizing changes values, not the shape or the dtype of the tensor.

    y has x's shape and dtype; the statistics keep the normalized dims as size 1, so they broadcast
    back over x.
    """
    make = partial(paired, kata, "LayerNorm", 8)
    expect_output_like_input(make, (3, 5, 8), device=device, name="LayerNorm(8)")


def test_input_unmodified(kata, device):
    """the input tensor is left unmodified

    The caller still owns x: compute into new tensors instead of overwriting it.

    Write x − μ into a new tensor; an in-place subtraction (the -= operator, or a method whose name
    ends in an underscore) writes into the caller's x.
    """
    mine, _ = paired(kata, "LayerNorm", 8)
    x = torch.randn(4, 8, device=device)
    expect_input_unmodified(mine.to(device), x, given="LayerNorm(8)")


def test_from_scratch(kata, device):
    """implemented from tensor operations, not the built-in layer norm

    The exercise is the formula: F.layer_norm, nn.LayerNorm and the other built-in norms are
    off limits here.

    mean, var, sqrt, rsqrt and broadcasting are all you need.
    """
    mine, _ = paired(kata, "LayerNorm", 8)
    mine = mine.to(device)
    x = torch.randn(4, 8, device=device)
    expect_from_scratch(
        lambda: mine(x), BUILTIN_NORMS, module=mine, forbidden_modules=BUILTIN_NORM_MODULES
    )


def test_vectorized(kata, device):
    """vectorized: no Python loop over rows or elements

    Reduce over whole dimensions at once and let broadcasting apply the statistics.

    μ and σ² over the normalized dims, each one reduction that keeps those dims (as size 1) so it
    broadcasts back; no loop.
    """
    expect_vectorized_rows(partial(paired, kata, "LayerNorm"), device=device, name="LayerNorm")


def test_statistics_per_sample(kata, device):
    """each sample is normalized with its own mean and variance, not the batch's

    LayerNorm's statistics come from one sample's features, so a sample's output never depends
    on the other samples in the batch; normalizing over dim 0 is BatchNorm's axis.

    μ = (1/D) Σ x over the last len(normalized_shape) dims only: D values per sample, never over the
    batch dims.
    """
    mine, _ = paired(kata, "LayerNorm", 8)
    mine = mine.to(device, torch.float64)
    x = torch.randn(4, 8, dtype=torch.float64, device=device) * 2 + 1
    alone = mine(x[:1].clone())
    others = x.clone()
    others[1:] = others[1:] * 10 + 5
    given = f"LayerNorm(8) on x {shape_of(x)}"
    expect_close(
        mine(others)[:1],
        alone,
        given=f"{given}, then on the same first sample with the others changed",
        what="the first sample's output",
    )


def test_same_in_eval_mode(kata, device):
    """eval mode normalizes each sample with its own statistics, exactly as training does

    LayerNorm keeps no running statistics: a model switched to eval() must give the same output
    as in training, for any input, unlike BatchNorm.

    Compute μ and σ² from x on every call, in training and in eval alike; keep none between calls.
    """
    # Against the layer's own output in training mode: how it normalizes is other checks'
    # business, that eval mode does the same is this one's.
    mine, _ = paired(kata, "LayerNorm", 8)
    mine = mine.to(device, torch.float64)
    mine(torch.randn(4, 8, dtype=torch.float64, device=device))  # a training call first
    x = torch.randn(4, 8, dtype=torch.float64, device=device) * 3 + 2
    in_eval = expect_tensor(mine.eval()(x.clone())).detach()
    in_training = expect_tensor(mine.train()(x.clone())).detach()
    given = (
        f"LayerNorm(8) in eval mode, after a training call, on another x {shape_of(x)}, "
        "against its own output in training mode"
    )
    # NaN where training gives NaN too is the same computation: NaN is other checks' business.
    expect_close(in_eval, in_training, given=given, judge_dtype=False, equal_nan=True)


def test_constant_input(kata, device):
    """a constant input gives bias, with no NaN

    A constant row has zero variance: eps keeps the division finite and the normalized value is 0.

    (x - mean) / sqrt(0 + eps) = 0, so y = 0 * weight + bias = bias.
    """
    mine, ref = paired(kata, "LayerNorm", 8)
    mine, ref = mine.to(device), ref.to(device)
    x = torch.full((3, 8), 2.5, device=device)
    given = "LayerNorm(8), its weight and bias random, on a constant input"
    got = expect_tensor(mine(x.clone())).detach()
    if got.shape == x.shape and values_close(got, (ref.bias * ref.weight).detach().expand_as(x)):
        # x̂ is 0 and finite, as this check asks: the shift went in before the scale.
        fail_for(
            "test_forward_matches_torch",
            f"{given}: the output is bias · weight, so the shift is added before the scale, "
            "(x̂ + bias) · weight; torch's is x̂ · weight + bias.",
        )
    expect_close(got, ref(x).detach(), given=given)


def test_biased_variance(kata, device):
    """the variance is the biased one (divide by N, not N - 1), as torch uses

    LayerNorm normalizes with the population variance of the features, not the sample variance.

    Var[x] = (1/D) Σ (x − μ)² over the normalized dims: divide by D, not D − 1.
    """
    x = torch.tensor([[1.0, 2.0, 4.0, 7.0]], dtype=torch.float64, device=device)
    ln = affine_off(kata, 4, eps=0.0).to(device, torch.float64)
    mean = x.mean(-1, keepdim=True)
    expected = (x - mean) / ((x - mean) ** 2).mean(-1, keepdim=True).sqrt()
    given = "LayerNorm(4, eps=0) on x = [1, 2, 4, 7]"
    got = ln(x.clone())
    if not values_close(got, expected):
        expect_own_statistics(ln, x, given=given)
        # Divided by the variance itself, not its root: the formula's mistake, not the divisor's.
        expect_scale_free(ln, x, given=given, owner="test_forward_matches_torch")
    expect_close(got, expected, given=given, judge_dtype=False)


def test_eps_inside_sqrt(kata, device):
    """eps is added to the variance, inside the square root, as given (0.0 too)

    eps guards the variance before the square root; the two placements differ most when the
    variance is small. An eps of 0.0 is no eps at all, not the default.

    Divide by sqrt(var + eps), not by sqrt(var) + eps.
    """

    def make(eps):
        return affine_off(kata, 8, eps=eps).to(device, torch.float64)

    def name(eps):
        return describe_call("LayerNorm", 8, eps=eps, elementwise_affine=False)

    def reference(x, eps):
        return F.layer_norm(x, (8,), eps=eps)

    x = torch.randn(4, 8, dtype=torch.float64, device=device) * 0.1
    expect_eps_in_the_root(
        make, x, 0.05, reference, name=name, given=f"small inputs x {shape_of(x)}"
    )
    # eps=0.0 is a value, not a missing eps: variances near 1e-6, where 1e-5 would show.
    x = torch.randn(4, 8, dtype=torch.float64, device=device) * 1e-3
    given = f"inputs x {shape_of(x)} of variance near 1e-6"
    if values_close(make(0.0)(x.clone()), F.layer_norm(x, (8,), eps=1e-5)):
        fail(
            f"{name(0.0)} on {given}: the output is that of eps=1e-5, the default, not of "
            "eps=0.0. An eps given is used as given, 0.0 too: `eps or 1e-5` takes 0.0 for a "
            "missing eps."
        )
    expect_eps_in_the_root(make, x, 0.0, reference, name=name, given=given)


def test_multidim_normalized_shape(kata, device):
    """a tuple normalized_shape such as (C, H, W) normalizes over all those dimensions

    normalized_shape names trailing dimensions: with (3, 4, 5), one mean and one variance are
    taken over the last three dimensions together, not over the last one only.

    With normalized_shape = (C, H, W), μ and σ² run over the last 3 dims: D = C·H·W values per
    sample.
    """
    # Against the layer's own LayerNorm(D) on x flattened to (..., D), with the same weight and
    # bias: how it normalizes D values is other checks' business, that it takes all of them
    # together is this one's.
    for shape, x_shape in (((4, 5), (2, 3, 4, 5)), ((3, 4, 5), (2, 3, 4, 5))):
        mine, ref = paired(kata, "LayerNorm", shape)
        flat = flat_twin(kata, ref)
        mine, flat = mine.to(device), flat.to(device)
        x = torch.randn(x_shape, device=device) * 2 + torch.arange(5.0, device=device)
        d = math.prod(shape)
        expected = expect_tensor(flat(x.reshape(*x.shape[: -len(shape)], d))).detach()
        given = (
            f"LayerNorm({shape}) on x {shape_of(x)}, against your LayerNorm({d}) with the same "
            f"weight and bias on x flattened to {shape_of(x.reshape(*x.shape[: -len(shape)], d))}"
        )
        expected = expected.reshape(x.shape)
        expect_close(mine(x), expected, given=given, judge_dtype=False, equal_nan=False)


def test_no_elementwise_affine(kata, device):
    """elementwise_affine=False: the layer has no parameters; weight and bias are None

    Without the affine transform the layer has nothing to learn, but the attributes still exist.

    Register weight and bias as parameters whose value is None: both attributes exist, the module
    lists no parameters, and the output is x̂ itself.
    """
    given = "LayerNorm(8, elementwise_affine=False)"
    mine = kata.LayerNorm(8, elementwise_affine=False)
    if list(mine.parameters()):
        fail(f"{given} should have no parameters.")
    with_affine = kata.LayerNorm(8)
    expect_no_weight_and_bias(mine, given=given, with_affine=with_affine)
    ref_off = nn.LayerNorm(8, elementwise_affine=False)
    expect_affine_state_dropped(with_affine, mine, nn.LayerNorm(8), ref_off, given=given)
    # Against the layer's own output with affine: what the layer normalizes with is other
    # checks' business, that nothing scales or shifts the output without affine is this one's.
    x = torch.randn(4, 8, device=device) * 2 + 1
    expect_unscaled(
        mine.to(device)(x.clone()),
        with_affine.to(device)(x.clone()),
        dims=(-1,),
        given=f"{given} and your LayerNorm(8) on x {shape_of(x)}",
    )


def test_numerically_stable(kata, device):
    """stable in float32 when the input has a large mean (no E[x²] - E[x]² shortcut)

    E[x²] - E[x]² subtracts two huge, nearly equal numbers and loses every significant digit
    in float32 when the mean is large compared with the spread.

    Centre first, then average the squares: xc = x - mean; var = mean(xc²).
    """
    x = 1000 + torch.randn(16, 256, device=device)
    ln = affine_off(kata, 256).to(device)
    given = f"LayerNorm(256) on x = 1000 + randn {shape_of(x)}"
    expect_stable_under_shift(ln, x, 1000, given=given)


def test_to_dtype(kata, device):
    """after .to(torch.float64) weight and bias are float64: state is registered, not plain

    .to() moves only registered tensors, parameters and buffers: a tensor kept as a plain
    attribute stays behind, in its old dtype and on its old device.

    Store learnable tensors as Parameters and any other tensor state as registered buffers; keep eps
    a Python float, which .to() leaves alone.
    """
    mine, _ = paired(kata, "LayerNorm", 8)
    mine = mine.to(device, torch.float64)
    expect_registered_state(mine, dtype=torch.float64, given="LayerNorm(8).to(float64)")


def test_follows_device(kata, device):
    """runs on CUDA: parameters move with .to(device), nothing is created on the CPU

    Every tensor forward creates must live on the input's device, and all state must move
    with .to(device).

    Any tensor forward creates is made on x's device, or derived from x (a ones-like of it); state
    lives in parameters and buffers, which .to(device) moves.
    """
    mine, _ = paired(kata, "LayerNorm", 8)
    expect_follows_device(mine, torch.randn(4, 8), device=device, given="LayerNorm(8)")


@pytest.mark.broad
def test_forward_matches_torch(kata, device):
    """forward matches nn.LayerNorm on several shapes, in float32 and float64

    Normalize each sample over its last len(normalized_shape) dimensions, then scale by
    weight and shift by bias.

    y = (x - mean) / sqrt(var + eps) * weight + bias, with mean and var over those dimensions.
    """
    # (8,) alone: an input without batch dims is one sample, as for torch.
    cases = [((8,), (4, 8)), ((8,), (2, 3, 8)), ((16,), (2, 7, 16)), ((8,), (1, 8)), ((8,), (8,))]
    # eps = 0.1 as well: at float32's tolerance, which float64 is held to too, the default
    # 1e-5 hides where eps goes.
    for dtype in (torch.float32, torch.float64):
        for eps in (1e-5, 0.1):
            for shape, x_shape in cases:
                mine, ref = paired(kata, "LayerNorm", shape, eps=eps)
                mine, ref = mine.to(device, dtype), ref.to(device, dtype)
                x = torch.randn(x_shape, device=device, dtype=dtype) * 3 + 1
                given = f"{describe_call('LayerNorm', shape[0], eps=eps)} on x {shape_of(x)}"
                expect_close(mine(x.clone()), ref(x).detach(), given=given)


@pytest.mark.broad
def test_gradients_match(kata, device):
    """gradients for the input, weight and bias match torch's

    Build forward from differentiable tensor operations and autograd does the rest; the mean
    and variance must stay in the graph.

    No .detach(), .data or in-place edits on the path from x to the output.
    """
    mine, ref = paired(kata, "LayerNorm", (3, 8))
    expect_same_grads_in_float64(mine, ref, (5, 3, 8), device=device, given="LayerNorm((3, 8))")


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """a float64 input is computed in float64, as torch does, not rounded through float32

    torch computes in float32 only for float16 and bfloat16 inputs; upcasting every input to
    float32, as fairseq's Fp32LayerNorm does, also rounds a float64 input to float32 (7 significant
    digits).

    compute dtype = float32 for float16/bfloat16 inputs, x.dtype otherwise: upcast only those.
    """
    mine, ref = paired(kata, "LayerNorm", 8)
    mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
    x = torch.randn(4, 8, dtype=torch.float64, device=device) * 2 + 1
    given = f"LayerNorm(8).to(float64) on x {shape_of(x)}"
    expect_float64_arithmetic(mine, x, given=given, reference=ref(x).detach())


@pytest.mark.parity
def test_no_bias(kata, device):
    """bias=False: a weight but no bias parameter (bias is None)

    Only the shift is dropped; the scale stays learnable.

    y = x̂ · weight, with bias registered as a parameter whose value is None.
    """
    mine, ref = paired(kata, "LayerNorm", 8, bias=False)
    if getattr(mine, "bias", "missing") is not None:
        fail("LayerNorm(8, bias=False) should have bias = None.")
    expect_state_dict_round_trip(
        kata.LayerNorm(8, bias=False), nn.LayerNorm(8, bias=False), given="LayerNorm(8, bias=False)"
    )
    names = sorted(n for n, _ in mine.named_parameters())
    if names != ["weight"]:
        fail(f"LayerNorm(8, bias=False) should have only a weight parameter, got {names}.")
    x = torch.randn(4, 8, device=device)
    mine, ref = mine.to(device), ref.to(device)
    expect_close(
        mine(x.clone()), ref(x).detach(), given=f"LayerNorm(8, bias=False) on x {shape_of(x)}"
    )


@pytest.mark.parity
def test_wrong_trailing_shape_raises(kata, device):
    """an input whose trailing dimensions differ from normalized_shape raises an error

    Without a check, a LayerNorm over (3, 4) without affine parameters would silently normalize a
    (2, 5, 4) input over the wrong dimensions.

    Compare the last len(normalized_shape) sizes of x with normalized_shape before computing
    anything, and fail with a RuntimeError (or a ValueError) that gives the shape expected and the
    shape received.
    """
    ln = kata.LayerNorm((3, 4), elementwise_affine=False).to(device)
    name = "LayerNorm((3, 4), elementwise_affine=False)"
    expect_rejects_shapes(ln, ((2, 5, 4), (4,)), device=device, name=name)


@pytest.mark.parity
def test_noncontiguous_input(kata, device):
    """a non-contiguous input works: a transposed x is normalized as its contiguous copy is

    Inputs often arrive as views: a sequence model's activations transposed, an image with its
    axes swapped. Their elements are not laid out one after the other, so a view that merges
    their dims fails, where torch normalizes them like any other input.

    Reduce over the normalized dims as they are, or flatten them with reshape, which copies
    when it must: a view of x needs a contiguous layout.
    """
    # Against the layer's own output for the same values laid out contiguously: what it
    # computes is other checks' business, that the layout does not matter is this one's.
    for shape, made, transposed in (
        ((4, 5), (2, 3, 5, 4), (-1, -2)),  # the normalized dims themselves transposed
        ((8,), (2, 8, 5), (1, 2)),  # rows of x not one after the other
    ):
        mine, _ = paired(kata, "LayerNorm", shape)
        mine = mine.to(device)
        x = torch.randn(made, device=device).transpose(*transposed)
        given = f"LayerNorm({shape}) on x {shape_of(x)}, transposed (non-contiguous)"
        expected = expect_tensor(mine(x.contiguous())).detach()
        try:
            out = mine(x)
        except NotImplementedError:
            raise
        except Exception as e:
            error = str(e).splitlines()[0] if str(e) else ""
            fail(f"{given} raised {type(e).__name__} ({error}); torch normalizes it.")
        given += ", against its own output for x.contiguous()"
        expect_close(out, expected, given=given, equal_nan=False)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, device, dtype):
    """half-precision inputs work: statistics in float32, the result in the input's dtype

    float16 keeps 11 significant bits and bfloat16 8: a mean of values far from zero, rounded to
    them, is off by a good part of the spread. On x = 384 + randn a row mean in float16 shifts
    every x̂; torch computes the statistics in float32.

    Compute the statistics and x̂ on a float32 copy of x, then cast the result back to x's dtype
    before it leaves forward.
    """
    name = str(dtype).removeprefix("torch.")
    mine, ref = paired(kata, "LayerNorm", 64)
    mine, ref = mine.to(device, dtype), ref.to(device, torch.float32)
    x = torch.randn(8, 64, device=device).to(dtype)
    expected = ref(x.float()).detach().to(dtype)
    given = f"LayerNorm(64).to({name}) on x {shape_of(x)}"
    expect_close(mine(x), expected, given=given, rtol=2e-2, atol=2e-2)
    # Far from zero, with the initial weight and bias (exact in any precision, so that only the
    # statistics show): the float64 formula rounded once, which float32 statistics rounded once
    # meet within an ulp. 2 ulps is the bound; statistics in half precision miss it many times.
    offset = HALF_OFFSET[dtype]
    mine = torch_initialised(kata, "LayerNorm", 64).to(device, dtype)
    x = (offset + torch.randn(8, 64, device=device)).to(dtype)
    expected = F.layer_norm(x.double(), (64,), eps=1e-5)
    given = f"LayerNorm(64).to({name}) on x = {offset:g} + randn {shape_of(x)}"
    expect_rounded_once(mine(x), {}, expected, {}, dtype=dtype, given=given)


@pytest.mark.parity
def test_empty_batch(kata, device):
    """an empty batch (zero rows) gives an empty output, as torch's does

    A batch of zero samples is a valid input: every reduction over the normalized dimensions
    still has its elements, there are just no rows to reduce.

    Keep the leading dimensions as they are: a reshape to (−1, n) cannot infer −1 from 0 elements,
    so spell out the leading sizes, or reduce over the normalized dims without flattening.
    """
    for shape, x_shape in (((8,), (0, 8)), ((3, 4), (2, 0, 3, 4))):
        mine, ref = paired(kata, "LayerNorm", shape)
        mine, ref = mine.to(device), ref.to(device)
        x = torch.randn(x_shape, device=device)
        expect_close(
            mine(x.clone()), ref(x).detach(), given=f"LayerNorm({shape}) on x {shape_of(x)}"
        )


def expect_own_statistics(layer, x, *, given):
    """The premise of a check that reads a statistic off the one sample x: x's output is the
    same alone as beside another sample. Where it is not, the statistics span the batch,
    test_statistics_per_sample's mistake, met here first."""
    other = x.flip(-1) * 3 + 1
    alone = expect_tensor(layer(x.clone())).detach()
    together = expect_tensor(layer(torch.cat([x, other]))).detach()
    if together.shape[:1] != (2,) or not values_close(together[:1], alone):
        fail_for(
            "test_statistics_per_sample",
            f"{given}: the sample's output alone differs from its output beside another "
            "sample, so its statistics are not its own; this check reads them off that sample.",
        )


def flat_twin(kata, ref):
    """The learner's LayerNorm(D) holding ref's weight and bias flattened, D = their number of
    elements: what the learner's layer over ref's normalized_shape must equal on x flattened."""
    d = math.prod(ref.normalized_shape)
    twin = nn.LayerNorm((d,))
    fresh = {k: v.clone() for k, v in twin.state_dict().items()}
    with torch.no_grad():
        twin.weight.copy_(ref.weight.reshape(d))
        twin.bias.copy_(ref.bias.reshape(d))
    flat = kata.LayerNorm((d,))  # a tuple: an int normalized_shape is test_parameters' business
    place_torch_state(flat, twin, given=f"LayerNorm(({d},))", initial=fresh)
    return flat


def affine_off(kata, *args, **kwargs):
    """kata.LayerNorm(*args, elementwise_affine=False, **kwargs), for a check of the
    normalization alone: a forward that fails on its None weight or bias is
    test_no_elementwise_affine's mistake."""
    layer = kata.LayerNorm(*args, elementwise_affine=False, **kwargs)
    given = describe_call("LayerNorm", *args, elementwise_affine=False, **kwargs)
    return without_affine(layer, given=given, owner="test_no_elementwise_affine")


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your LayerNorm and nn.LayerNorm on a batch of token vectors."""
    rows, d = (8192, 4096) if device.type == "cuda" else (2048, 1024)
    mine, ref = paired(kata, "LayerNorm", d)
    mine, ref = mine.to(device), ref.to(device)
    x = torch.randn(rows, d, device=device, requires_grad=True)
    given = f"LayerNorm({d}) on x {shape_of(x)}"
    return PerfCase.of_layers(given, mine, ref, x, builtin_name="nn.LayerNorm")
