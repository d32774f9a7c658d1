"""Hidden checks for the RMSNorm kata, each compared with torch.nn.RMSNorm.

The kata states current torch's contract, read from its source (torch/_decomp/decompositions.py,
_fused_rms_norm) and confirmed by running it: float16/bfloat16 inputs are upcast to float32;
eps=None means torch.finfo(computation dtype).eps, so finfo(float32).eps for half and float32
inputs and finfo(float64).eps for float64; the weight is applied before the cast back.

Where the expected value comes from: torch 2.4 computed half inputs in half precision (so 300²
overflowed, and eps=None meant a half-precision eps), later releases in float32. For float16
and bfloat16 the expected value is therefore that contract written out in float64
(`rms_norm_reference`), so it does not move with the installed release; for float32 and float64,
where every supported release agrees, it is torch.nn.RMSNorm itself.

Interview core first, then torch parity (@pytest.mark.parity): the dtype policy (float64
computed in float64, float16 upcast so that it does not overflow, half inputs matched exactly),
the eps=None default, the shape error and an empty batch. The core checks pass eps explicitly,
so an interview answer with its own default eps is not penalised there; and they compare
float64 outputs at float32's tolerance: LLaMA's RMSNorm, which computes in float32 whatever it
is given, solves the core, and test_computes_in_float64 (parity) is where it parts from torch.
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
    PerfCase,
    Suite,
    describe_call,
    dtype_name,
    expect_affine_state_dropped,
    expect_close,
    expect_eps_in_the_root,
    expect_float64_arithmetic,
    expect_follows_device,
    expect_from_scratch,
    expect_input_unmodified,
    expect_output_like_input,
    expect_registered_state,
    expect_rejects_shapes,
    expect_same_grads_in_float64,
    expect_same_parameters,
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

# float16 outputs get rtol 2e-3 (two ulps) instead of 1e-3: casting back before multiplying by
# the weight, as Hugging Face's LLaMA does, rounds once more than torch and is still correct.
RTOL = {torch.float16: 2e-3}


HALF = (torch.float16, torch.bfloat16)


def rms_norm_reference(x, ref):
    """Current torch's RMSNorm of x with ref's settings, written out in float64 (see above)."""
    dims = tuple(range(-len(ref.normalized_shape), 0))
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    eps = torch.finfo(compute).eps if ref.eps is None else ref.eps
    x64 = x.double()
    y = x64 * torch.rsqrt(x64.square().mean(dims, keepdim=True) + eps)
    if ref.weight is not None:
        y = y * ref.weight.detach().double()
    return y.to(x.dtype)


def expect_same(mine, ref, x, *, given, rtol=None, atol=None):
    """mine(x) must match torch's RMSNorm of x, computed first in case yours changes x in place.

    torch.nn.RMSNorm itself for float32 and float64; the float64 formula for half dtypes.
    """
    want = rms_norm_reference(x, ref) if x.dtype in HALF else ref(x).detach()
    expect_close(mine(x), want, given=given, rtol=rtol or RTOL.get(x.dtype), atol=atol)


def rms_norm_f64(x, dims, eps):
    """The formula itself, in float64: x / sqrt(mean(x², dims) + eps)."""
    x = x.double()
    return x / torch.sqrt(x.square().mean(dims, keepdim=True) + eps)


def test_parameters(kata):
    """weight is a parameter named, shaped and initialised like torch's; attributes as torch's

    The gain is the only learnable tensor (no bias), and it must be an nn.Parameter so that the
    optimizer, state_dict and .to() see it. The constructor's arguments are kept as given.

    weight: an nn.Parameter of ones with shape normalized_shape, named weight; normalized_shape
    kept as a tuple (an int n becomes (n,)); eps and elementwise_affine kept as given.

    [initial] The gain starts at one for every feature, as torch's, so that an untrained layer
    passes the normalized input through unscaled; training moves it from there.

    [initial] weight₀ = 1 at every position of normalized_shape: a tensor of ones of that
    shape, not random values.
    """
    for args in ((8,), ((3, 4),), ([3, 4],)):
        mine, ref = kata.RMSNorm(*args), nn.RMSNorm(*args)
        expect_same_parameters(mine, ref, given=f"RMSNorm{args}")
        shape = getattr(mine, "normalized_shape", None)
        if not isinstance(shape, tuple) or shape != ref.normalized_shape:
            fail(
                f"RMSNorm{args}.normalized_shape is {shape!r}, expected {ref.normalized_shape!r}: "
                "store it as a tuple (an int n becomes (n,)), like torch."
            )
    for kwargs in ({"eps": 1e-3}, {"eps": 1e-6, "elementwise_affine": False}):
        mine, ref = kata.RMSNorm(8, **kwargs), nn.RMSNorm(8, **kwargs)
        for attr in ("eps", "elementwise_affine"):
            have, want = getattr(mine, attr, "missing"), getattr(ref, attr)
            if have != want or (want is None) != (have is None):
                layer = describe_call("RMSNorm", 8, **kwargs)
                fail(
                    f"{layer}.{attr} is {have!r}, expected {want!r}. Store the constructor's "
                    "arguments as given: eps=None stays None, and forward picks the value."
                )


def test_state_dict_round_trip(kata):
    """state_dict loads from nn.RMSNorm and into it, both ways

    A checkpoint trained with nn.RMSNorm (a LLaMA one, say) must load into your module, and
    yours into nn.RMSNorm.

    Use torch's name and shape: weight (not scale or gamma), of shape normalized_shape.
    """
    expect_state_dict_round_trip(kata.RMSNorm((3, 8)), nn.RMSNorm((3, 8)), given="RMSNorm((3, 8))")


def test_output_like_input(kata, device):
    """output has the input's shape, dtype and device

    Normalizing changes values, not the shape or the dtype of the tensor.

    y has x's shape and dtype; the RMS keeps the normalized dims as size 1, so it broadcasts back
    over x.
    """
    make = partial(paired, kata, "RMSNorm", 8)
    expect_output_like_input(make, (3, 5, 8), device=device, name="RMSNorm(8)")


def test_input_unmodified(kata, device):
    """the input tensor is left unmodified

    The caller still owns x: compute into new tensors instead of overwriting it.

    Never scale or square x in place (an augmented assignment or a method ending in "_"); a new
    tensor y = x · rstd is fine.
    """
    mine, _ = paired(kata, "RMSNorm", 8)
    x = torch.randn(4, 8, device=device)
    expect_input_unmodified(mine.to(device), x, given="RMSNorm(8)")


def test_from_scratch(kata, device):
    """implemented from tensor operations, not the built-in RMS norm

    The exercise is the formula: F.rms_norm, torch.rms_norm, nn.RMSNorm and the other built-in
    norms are off limits here.

    square (or pow), mean, sqrt or rsqrt, casts and broadcasting are all you need.
    """
    for dtype in (torch.float32, torch.float16):
        mine, _ = paired(kata, "RMSNorm", 8)
        mine = mine.to(device, dtype)
        x = torch.randn(4, 8, device=device, dtype=dtype)
        expect_from_scratch(
            lambda mine=mine, x=x: mine(x),
            BUILTIN_NORMS,
            module=mine,
            forbidden_modules=BUILTIN_NORM_MODULES,
        )


def test_vectorized(kata, device):
    """vectorized: no Python loop over rows or elements

    Reduce over whole dimensions at once and let broadcasting do the rest.

    mean(x²) over all the normalized dims in one reduction that keeps them (as size 1), so it
    broadcasts back; no loop.
    """
    expect_vectorized_rows(partial(paired, kata, "RMSNorm"), device=device, name="RMSNorm")


def test_statistics_per_sample(kata, device):
    """each sample is divided by its own root mean square, not the batch's

    RMSNorm's statistic comes from one sample's features, so a sample's output never depends on
    the other samples in the batch: a mean over every dim of x, or over dim 0, mixes them in.

    mean(x²) over the last len(normalized_shape) dims only: D values per sample, never over the
    batch dims.
    """
    mine, _ = paired(kata, "RMSNorm", 8, eps=1e-6)
    mine = mine.to(device, torch.float64)
    x = torch.randn(4, 8, dtype=torch.float64, device=device) * 2 + 1
    alone = expect_tensor(mine(x[:1].clone())).detach()
    others = x.clone()
    others[1:] = others[1:] * 10 + 5
    given = (
        f"RMSNorm(8, eps=1e-6) on x {shape_of(x)}, then on the same first sample with the "
        "others changed"
    )
    expect_close(mine(others)[:1], alone, given=given, what="the first sample's output")


def test_same_in_eval_mode(kata, device):
    """eval mode divides each sample by its own root mean square, exactly as training does

    RMSNorm keeps no running statistic: a model switched to eval() must give the same output
    as in training, for any input, unlike BatchNorm.

    Compute mean(x²) from x on every call, in training and in eval alike; keep none between calls.
    """
    # Against the layer's own output in training mode: how it normalizes is other checks'
    # business, that eval mode does the same is this one's.
    mine, _ = paired(kata, "RMSNorm", 8, eps=1e-6)
    mine = mine.to(device, torch.float64)
    mine(torch.randn(4, 8, dtype=torch.float64, device=device))  # a training call first
    x = torch.randn(4, 8, dtype=torch.float64, device=device) * 3 + 2
    in_eval = expect_tensor(mine.eval()(x.clone())).detach()
    in_training = expect_tensor(mine.train()(x.clone())).detach()
    given = (
        f"RMSNorm(8, eps=1e-6) in eval mode, after a training call, on another x {shape_of(x)}, "
        "against its own output in training mode"
    )
    # NaN where training gives NaN too is the same computation: NaN is other checks' business.
    expect_close(in_eval, in_training, given=given, judge_dtype=False, equal_nan=True)


def test_zero_input(kata, device):
    """an all-zero input gives zeros, with no NaN

    A row of zeros has mean square 0: eps, the default one included, keeps the division
    finite.

    0 · 1/√(0 + ε) = 0, whereas 0 / √0 = 0/0 = NaN.
    """
    for kwargs in ({"eps": 1e-6}, {"eps": 1e-5}):
        mine, ref = paired(kata, "RMSNorm", 8, **kwargs)
        mine, ref = mine.to(device), ref.to(device)
        x = torch.zeros(3, 8, device=device)
        expect_same(
            mine, ref, x, given=f"{describe_call('RMSNorm', 8, **kwargs)} on an all-zero input"
        )


def test_root_mean_square(kata, device):
    """x is divided by its root mean square, not by its L2 norm

    The mean square divides the sum of squares by the number of normalized elements; without
    that division the result is the L2 norm, smaller by a factor sqrt(n).

    rms = √(mean(x²) + ε), the mean over all the normalized dims (D values per sample).

    [not by n − 1] The mean square is a plain mean: the sum of the squares over the n normalized
    elements, divided by n. Dividing by n − 1 is the unbiased variance's correction, for an
    estimate taken around a sample mean; RMSNorm takes no mean.

    [not by n − 1] rms = √(Σx² / n + ε), n = the number of normalized elements (D per sample).
    """
    # Rows of mean 0 (so centring changes nothing) and eps = 0 (so its placement does not
    # either), each alone (so which dims hold the samples does not either): only the scale is
    # left to check.
    x = torch.tensor([[1.0, -1.0, 2.0, -2.0], [3.0, 0.5, -3.0, -0.5]], dtype=torch.float64)
    x = x.to(device)
    rn = affine_off(kata, 4, eps=0.0).to(device, torch.float64)
    given = (
        "RMSNorm(4, eps=0, elementwise_affine=False) on the rows [1, -1, 2, -2] and "
        "[3, 0.5, -3, -0.5], each alone"
    )
    got = each_row_alone(rn, x)
    if values_close(got, rms_norm_f64(x, (-1,), 0.0)):
        return
    expect_own_statistics(rn, x, given=given)
    squares = x.square().sum(-1, keepdim=True)
    for divisor, said in (
        (1, "x divided by its L2 norm √Σx², not by the root of the mean of the squares"),
        (3, "x divided by √(Σx² / (n − 1)), n = 4: the mean divides by n, not by n − 1"),
    ):
        if values_close(got, x / (squares / divisor).sqrt()):
            fail(f"{given}: the output is {said}.")
    expect_close(got, rms_norm_f64(x, (-1,), 0.0), given=given, judge_dtype=False)


def test_no_mean_centring(kata, device):
    """no mean is subtracted, and x is divided by its root mean square, not its standard deviation

    The root mean square is taken around zero, not around the mean (the standard deviation is
    taken around the mean), and there is no bias: an input with a large mean keeps its sign and
    stays near x / |mean|.

    rms = √(mean(x²) + ε), with x itself squared, not x − μ (and not the variance).
    """
    # eps = 0: where eps goes does not matter here, whether a mean is subtracted does. Rows of
    # different spreads: x / σ is then no fixed multiple of x / rms.
    x = 5 + torch.randn(4, 16, dtype=torch.float64, device=device) * torch.tensor(
        [[0.5], [1.0], [2.0], [3.0]], dtype=torch.float64, device=device
    )
    rn = affine_off(kata, 16, eps=0.0).to(device, torch.float64)
    expected = rms_norm_f64(x, (-1,), 0.0)
    given = (
        f"RMSNorm(16, eps=0, elementwise_affine=False) on the rows of x = 5 + randn {shape_of(x)}, "
        "of spreads 0.5, 1, 2 and 3, each alone"
    )
    got = each_row_alone(rn, x)
    if values_close(got, expected):
        return
    expect_own_statistics(rn, x[:1], given=given)
    # One factor for every row (an L2 norm is √n times the RMS) is test_root_mean_square's.
    flat = got.detach().double().reshape(-1).cpu()
    want = expected.reshape(-1).cpu()
    factor = float((flat * want).sum() / want.square().sum())
    if factor > 0 and values_close(got, expected * factor):
        return
    expect_close(got, expected, given=given, judge_dtype=False)


def test_eps_inside_sqrt(kata, device):
    """eps is added to the mean square, inside the square root

    eps guards the mean square before the square root; the two placements differ most when
    the input is small.

    y = x / √(mean(x²) + ε) · w: ε inside the root, not x / (√mean(x²) + ε).
    """

    def make(eps):
        return affine_off(kata, 8, eps=eps).to(device, torch.float64)

    def name(eps):
        return describe_call("RMSNorm", 8, eps=eps, elementwise_affine=False)

    x = torch.randn(4, 8, dtype=torch.float64, device=device) * 0.1
    expect_eps_in_the_root(
        make,
        x,
        0.05,
        lambda x, eps: F.rms_norm(x, (8,), eps=eps),
        name=name,
        given=f"small inputs x {shape_of(x)}",
    )


def test_weight_scales_each_element(kata, device):
    """the weight itself multiplies each normalized element: y = x / rms · weight, not 1 + weight

    The gain is the weight itself, starting at ones as torch's does, one factor per element of
    normalized_shape. Gemma's RMSNorm keeps weight − 1 instead and multiplies by 1 + weight:
    a state_dict of torch's then doubles every output.

    y = x / √(mean(x²) + ε) · w, with w of shape normalized_shape, multiplied element by element.
    """
    # Against the layer's own output with the initial weight (ones), times the weight: what the
    # layer divides by is other checks' business, what the weight does is this one's.
    mine, ref = paired(kata, "RMSNorm", 8, eps=1e-6)
    mine = mine.to(device, torch.float64)
    weight = ref.weight.detach().to(device, torch.float64)
    unit = torch_initialised(kata, "RMSNorm", 8, eps=1e-6).to(device, torch.float64)
    x = torch.randn(4, 8, dtype=torch.float64, device=device)
    expected = expect_tensor(unit(x.clone())).detach() * weight
    given = (
        f"RMSNorm(8, eps=1e-6) with nn.RMSNorm's random weight w, on x {shape_of(x)}, against "
        "its own output with weight ones, times w"
    )
    expect_close(mine(x), expected, given=given, judge_dtype=False, equal_nan=False)


def test_multidim_normalized_shape(kata, device):
    """a tuple normalized_shape such as (C, H, W) normalizes over all those dimensions

    normalized_shape names trailing dimensions: with (3, 4, 5), one mean square is taken over
    the last three dimensions together, not over the last one only.

    With normalized_shape = (C, H, W), mean(x²) runs over the last 3 dims: D = C·H·W values per
    sample.
    """
    # Against the layer's own RMSNorm(D) on x flattened to (..., D), with the same weight: how
    # it normalizes D values is other checks' business, that it takes all of them together is
    # this one's.
    for shape, x_shape in (((4, 5), (2, 3, 4, 5)), ((3, 4, 5), (2, 3, 4, 5))):
        mine, ref = paired(kata, "RMSNorm", shape, eps=1e-6)
        flat = flat_twin(kata, ref)
        mine, flat = mine.to(device), flat.to(device)
        scale = torch.arange(1.0, 1.0 + x_shape[-2], device=device).unsqueeze(-1)
        x = torch.randn(x_shape, device=device) * scale
        d = math.prod(shape)
        flattened = x.reshape(*x.shape[: -len(shape)], d)
        expected = expect_tensor(flat(flattened.clone())).detach().reshape(x.shape)
        given = (
            f"RMSNorm({shape}) on x {shape_of(x)}, against your RMSNorm({d}) with the same "
            f"weight on x flattened to {shape_of(flattened)}"
        )
        expect_close(mine(x), expected, given=given, judge_dtype=False, equal_nan=False)


def test_no_elementwise_affine(kata, device):
    """elementwise_affine=False: no parameters, and weight is None

    Without the gain the layer has nothing to learn, but the attribute still exists so that
    state_dict, .to() and repr behave like torch's.

    Register weight as a parameter whose value is None, so that the attribute exists but holds
    nothing to learn; forward then returns x / rms unscaled.
    """
    mine = kata.RMSNorm(8, eps=1e-6, elementwise_affine=False)
    given = "RMSNorm(8, elementwise_affine=False)"
    if list(mine.parameters()):
        fail(f"{given} should have no parameters.")
    with_affine = kata.RMSNorm(8, eps=1e-6)
    if not hasattr(mine, "weight") and not hasattr(with_affine, "weight"):
        fail_for(
            "test_parameters",
            f"{given} has no attribute weight, and neither has the layer with affine: torch's "
            "layer calls it weight.",
        )
    if getattr(mine, "weight", "missing") is not None:
        fail(f"{given} should have weight = None.")
    ref_off = nn.RMSNorm(8, elementwise_affine=False)
    expect_affine_state_dropped(with_affine, mine, nn.RMSNorm(8), ref_off, given=given)
    # Against the layer's own output with its weight: what the layer divides by is other
    # checks' business, and what the weight does (Gemma's 1 + weight doubles the output) the
    # weight's check's; that nothing scales the output without it is this one's.
    x = torch.randn(4, 8, device=device) * 2 + 1
    expect_unscaled(
        mine.to(device)(x.clone()),
        with_affine.to(device)(x.clone()),
        dims=(-1,),
        given=f"{given} and your RMSNorm(8, eps=1e-6) on x {shape_of(x)}",
    )


def test_to_dtype(kata, device):
    """after .to(torch.float64) the weight is float64: state is registered, not a plain tensor

    .to() moves only registered state: a tensor kept as a plain attribute stays behind, in its
    old dtype and on its old device.

    Make the weight an nn.Parameter (and non-learnable tensor state a registered buffer), never
    a plain tensor attribute, and keep eps a Python float rather than a cached tensor.
    """
    mine = kata.RMSNorm(8, eps=1e-6).to(device, torch.float64)
    expect_registered_state(mine, dtype=torch.float64, given="RMSNorm(8, eps=1e-6).to(float64)")


def test_follows_device(kata, device):
    """runs on CUDA: the weight moves with .to(device), nothing is created on the CPU

    Everything forward touches must live on x's device: state that .to(device) moves, and new
    tensors created there.

    Make each tensor forward needs on x's device, or like x (the full_like and new_full
    family); a Python float eps needs no tensor at all.
    """
    mine, _ = paired(kata, "RMSNorm", 8)
    expect_follows_device(mine, torch.randn(4, 8), device=device, given="RMSNorm(8)")


@pytest.mark.broad
def test_forward_matches_torch(kata, device):
    """forward matches nn.RMSNorm on several shapes, in float32 and float64

    Each sample is divided by the root mean square of its normalized dimensions, then scaled
    by the learned gain.

    y = x / √(mean(x²) + ε) · w, the mean over the last len(normalized_shape) dims.
    """
    cases = [((8,), (4, 8)), ((8,), (2, 3, 8)), ((16,), (2, 7, 16)), ((5,), (5,))]
    for dtype in (torch.float32, torch.float64):
        for eps in (1e-5, 1e-3):
            for shape, x_shape in cases:
                mine, ref = paired(kata, "RMSNorm", shape, eps=eps)
                mine, ref = mine.to(device, dtype), ref.to(device, dtype)
                x = torch.randn(x_shape, device=device, dtype=dtype) * 3 + 1
                given = f"{describe_call('RMSNorm', *shape, eps=eps)} on x {shape_of(x)}"
                expect_same(mine, ref, x, given=given)


@pytest.mark.broad
def test_gradients_match(kata, device):
    """gradients for the input and the weight match torch's

    Build forward from differentiable tensor operations and autograd does the rest; the mean
    square must stay in the graph.

    Nothing detached, nothing read through a tensor's data attribute, and no in-place edit on the
    path from x to the output.
    """
    mine, ref = paired(kata, "RMSNorm", (3, 8), eps=1e-5)
    given = "RMSNorm((3, 8), eps=1e-5)"
    expect_same_grads_in_float64(mine, ref, (5, 3, 8), device=device, given=given)


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """a float64 input is computed in float64, as torch does, not rounded through float32

    torch upcasts only float16 and bfloat16. Casting x to float32 whatever its dtype, as LLaMA
    and Hugging Face's LlamaRMSNorm do, also rounds a float64 input to float32 (7 significant
    digits).

    Upcast x only when it is float16 or bfloat16; any other input is computed in its own dtype.
    """
    mine, ref = paired(kata, "RMSNorm", 8, eps=1e-6)
    mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
    x = torch.randn(4, 8, dtype=torch.float64, device=device)
    given = f"RMSNorm(8, eps=1e-6).to(float64) on x {shape_of(x)}"
    expect_float64_arithmetic(mine, x, given=given, reference=ref(x).detach())


@pytest.mark.parity
def test_half_large_values(kata, device):
    """a float16 input of magnitude ~300 does not overflow

    The largest float16 is 65504 and 300² = 90000: squaring in float16 gives inf, and the
    whole row collapses to 0.

    Upcast x to float32, square and average there, then cast the result back to x's dtype.
    """
    mine, ref = paired(kata, "RMSNorm", 64, eps=1e-6)
    mine, ref = mine.to(device, torch.float16), ref.to(device, torch.float16)
    x = (torch.randn(8, 64, device=device) * 300).to(torch.float16)
    out = expect_tensor(mine(x))
    # Values only: which dtype comes back is test_half_precision's business.
    given = f"RMSNorm(64, eps=1e-6).to(float16) on x = randn * 300 {shape_of(x)}"
    expect_close(out.to(torch.float16), rms_norm_reference(x, ref), given=given)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_name)
def test_half_precision(kata, device, dtype):
    """float16 and bfloat16 inputs are computed in float32 and returned in the input's dtype

    Half precision has few mantissa bits: do the arithmetic in float32, as torch does, and give
    the caller back the dtype it passed in.

    In float32: y = x / √(mean(x²) + ε) · w; then round y once, to the input's dtype.
    """
    mine, ref = paired(kata, "RMSNorm", 64)
    mine, ref = mine.to(device, dtype), ref.to(device, dtype)
    x = (torch.randn(8, 64, device=device) * 2).to(dtype)
    expect_same(mine, ref, x, given=f"RMSNorm(64).to({dtype_name(dtype)}) on x {shape_of(x)}")
    # With the initial weight (ones: the weight's step is exact in any order), float32
    # arithmetic rounded once gives the float64 result rounded once, but where it falls
    # within float32's error of a rounding boundary (about one element in 2000). Half-precision
    # arithmetic rounds x², the mean, the rsqrt and the product: each element is within an ulp
    # or two, yet a fifth of them or more are off (measured over 200 seeds).
    mine, ref = kata.RMSNorm(64, eps=1e-6), nn.RMSNorm(64, eps=1e-6)
    given = f"RMSNorm(64, eps=1e-6).to({dtype_name(dtype)}) on x {shape_of(x)}"
    place_torch_state(mine, ref, given=given)
    mine, ref = mine.to(device, dtype), ref.to(device, dtype)
    want = rms_norm_reference(x, ref)
    got = expect_tensor(mine(x))
    expect_close(got, want, given=given, rtol=RTOL.get(dtype))
    off = (got != want).double().mean().item()
    if off > 0.02:
        fail(
            f"{given}: {off:.0%} of the outputs differ from the exact result rounded once to "
            f"{dtype_name(dtype)} (by an ulp or so), where computing in float32 and rounding "
            "once at the end misses almost none: the arithmetic ran in half precision. Upcast "
            "x with x.float(), compute there, and cast the result back with .to(x.dtype)."
        )


@pytest.mark.parity
@pytest.mark.parametrize(
    ("dtype", "scale"),
    [(torch.float32, 1e-4), (torch.float64, 1e-8), (torch.float16, 1e-4), (torch.bfloat16, 1e-4)],
    ids=["float32", "float64", "float16", "bfloat16"],
)
def test_eps_default(kata, device, dtype, scale):
    """eps=None (the default) is torch.finfo of the computation dtype, as torch defines it

    Not 0 and not a fixed 1e-5 or 1e-6: torch uses the machine epsilon of the dtype the
    computation runs in, which is float32 for float16, bfloat16 and float32 inputs, and float64
    for float64. It decides the output when the input's RMS is tiny (and in float16 itself,
    (1e-4)² underflows to 0: square in float32).

    When eps is None, ε is the machine epsilon that finfo reports about the compute dtype (float64
    on float64 inputs, float32 otherwise, never float16); a given eps is used as it is.
    """
    if getattr(kata.RMSNorm(16), "eps", "missing") is not None:
        fail(
            f"RMSNorm(16).eps is {getattr(kata.RMSNorm(16), 'eps', 'missing')!r}: torch's default "
            "is eps=None, stored as given; forward picks the value."
        )
    mine, ref = paired(kata, "RMSNorm", 16)
    mine, ref = mine.to(device, dtype), ref.to(device, dtype)
    x = (torch.randn(4, 16, device=device, dtype=torch.float64) * scale).to(dtype)
    given = f"RMSNorm(16) (eps=None) on x = randn * {scale:g} {shape_of(x)}"
    expect_same(mine, ref, x, given=given)


@pytest.mark.parity
def test_wrong_trailing_shape_raises(kata, device):
    """an input whose trailing dimensions differ from normalized_shape raises an error

    Without a check, an RMSNorm over (3, 4) without affine would silently normalize a (2, 5, 4)
    input over the wrong dimensions.

    Compare x's last len(normalized_shape) sizes with normalized_shape (an input of lower rank
    fails too); on a mismatch, raising RuntimeError as torch does, or ValueError, in a message
    that shows both shapes.
    """
    rn = kata.RMSNorm((3, 4), elementwise_affine=False).to(device)
    name = "RMSNorm((3, 4), elementwise_affine=False)"
    expect_rejects_shapes(rn, ((2, 5, 4), (4,), (2, 4, 3)), device=device, name=name)


@pytest.mark.parity
def test_empty_batch(kata, device):
    """an empty batch (zero rows) gives an empty output, as torch's does

    A batch of zero samples is a valid input: each row's mean square is still well defined,
    there are just no rows.

    Keep the leading dimensions as they are: a reshape that leaves one size for torch to infer
    (−1) fails when another size is 0, since with 0 elements any value fits.
    """
    for shape, x_shape in (((8,), (0, 8)), ((3, 4), (2, 0, 3, 4))):
        mine, ref = paired(kata, "RMSNorm", shape, eps=1e-6)
        mine, ref = mine.to(device), ref.to(device)
        x = torch.randn(x_shape, device=device)
        expect_same(mine, ref, x, given=f"RMSNorm({shape}, eps=1e-6) on x {shape_of(x)}")


def expect_own_statistics(layer, x, *, given):
    """The premise of a check that reads the RMS off x's samples: the first sample's output is
    the same alone as in x. Where it is not, the statistic spans the batch,
    test_statistics_per_sample's mistake, met here first."""
    other = torch.cat([x, x.flip(-1) * 3 + 1]) if x.shape[0] == 1 else x
    alone = expect_tensor(layer(other[:1].clone())).detach()
    together = expect_tensor(layer(other.clone())).detach()
    if together.shape[:1] != other.shape[:1] or not values_close(together[:1], alone):
        fail_for(
            "test_statistics_per_sample",
            f"{given}: the first sample's output alone differs from its output beside the "
            "others, so its root mean square is not its own; this check reads it off each sample.",
        )


def each_row_alone(layer, x):
    """layer's outputs for the rows of x, each given alone as a batch of one, stacked."""
    return torch.cat([expect_tensor(layer(x[i : i + 1].clone())).detach() for i in range(len(x))])


def flat_twin(kata, ref):
    """The learner's RMSNorm(D) holding ref's weight flattened, D = its number of elements
    (eps as ref's): what the learner's layer over ref's normalized_shape must equal on x
    flattened."""
    d = math.prod(ref.normalized_shape)
    twin = nn.RMSNorm((d,), eps=ref.eps)
    fresh = {k: v.clone() for k, v in twin.state_dict().items()}
    with torch.no_grad():
        twin.weight.copy_(ref.weight.reshape(d))
    flat = kata.RMSNorm((d,), eps=ref.eps)  # a tuple: an int one is test_parameters' business
    given = describe_call("RMSNorm", (d,), eps=ref.eps)
    place_torch_state(flat, twin, given=given, initial=fresh)
    return flat


def affine_off(kata, *args, **kwargs):
    """kata.RMSNorm(*args, elementwise_affine=False, **kwargs), for a check of the
    normalization alone: a forward that fails on its None weight is
    test_no_elementwise_affine's mistake."""
    layer = kata.RMSNorm(*args, elementwise_affine=False, **kwargs)
    given = describe_call("RMSNorm", *args, elementwise_affine=False, **kwargs)
    return without_affine(layer, given=given, owner="test_no_elementwise_affine")


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your RMSNorm and nn.RMSNorm on a batch of token vectors."""
    rows, d = (8192, 4096) if device.type == "cuda" else (2048, 1024)
    mine, ref = paired(kata, "RMSNorm", d, eps=1e-6)
    mine, ref = mine.to(device), ref.to(device)
    x = torch.randn(rows, d, device=device, requires_grad=True)
    given = f"RMSNorm({d}) on x {shape_of(x)}"
    return PerfCase.of_layers(given, mine, ref, x, builtin_name="nn.RMSNorm")
