"""Hidden checks for the GroupNorm kata, each compared with torch.nn.GroupNorm.

Interview core first, then torch parity (@pytest.mark.parity): float64 computed in float64,
the divisibility error and its message, half precision and an empty batch. Which dtype a layer
computes in is dtype policy, so the core compares float64 outputs at float32's tolerance: a
GroupNorm that computes in float32 whatever it is given (fairseq's Fp32GroupNorm) solves it.
torch's releases word the divisibility message differently (2.4: "num_channels must be
divisible by num_groups"; 2.13 adds the two numbers), so either text is accepted. A half layer
on half input is compared with the formula in float64; what a float32 layer returns for half
input is not checked.

Each core property in every mode where it applies (GroupNorm keeps no running statistics, so
training and eval are one path; eps=0.05 or 0.1 where eps must show):

    property                      affine=True                      affine=False
    groups, per sample, eps       forward_matches_torch (ranks     eps_inside_sqrt, no_affine,
                                  2-4, eps 1e-5 and 0.1)           one_and_c_groups, ...
    training and eval the same    same_in_eval_mode                (the same code path)
    gradients                     gradients_match                  (no operation of its own)
    parameters and state_dict     parameters, state_dict_round_... no_affine
"""

import pytest
import torch
from torch import nn

from norm_katas.checks import (
    BUILTIN_NORM_MODULES,
    BUILTIN_NORMS,
    HALF_OFFSET,
    PerfCase,
    Suite,
    describe_call,
    expect_affine_state_dropped,
    expect_close,
    expect_eps_in_the_root,
    expect_float64_arithmetic,
    expect_follows_device,
    expect_from_scratch,
    expect_input_unmodified,
    expect_like,
    expect_no_weight_and_bias,
    expect_raises,
    expect_registered_state,
    expect_rounded_once,
    expect_same_grads_in_float64,
    expect_stable_under_shift,
    expect_state_dict_round_trip,
    expect_tensor,
    expect_unscaled,
    expect_vectorized,
    fail,
    fail_for,
    influence,
    paired,
    shape_of,
    torch_initialised,
    values_close,
    without_affine,
)

SUITE = Suite()

# (num_groups, num_channels, input shape): G of 1, a divisor of C, and C, over ranks 2 to 4.
CASES = [
    (1, 6, (3, 6, 5)),
    (3, 6, (2, 6, 4, 4)),
    (6, 6, (2, 6, 7)),
    (2, 8, (4, 8)),
    (4, 8, (2, 8, 3)),
]


def group_norm_f64(x, groups, eps, weight=None, bias=None):
    """The formula itself in float64: statistics per sample over each group of channels."""
    n, c = x.shape[:2]
    g = x.double().reshape(n, groups, c // groups, -1)
    mean = g.mean((2, 3), keepdim=True)
    var = (g - mean).square().mean((2, 3), keepdim=True)
    y = ((g - mean) / torch.sqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.dim() - 2)
    if weight is not None:
        y = y * weight.detach().double().view(shape) + bias.detach().double().view(shape)
    return y


def test_parameters(kata):
    """weight and bias are per-channel parameters (shape (C,)) initialised like torch's

    GroupNorm's statistics are per group, but its scale and shift are per channel: every channel
    keeps its own, and nn.Parameter lets the optimizer, state_dict and .to() see them.

    weight: an nn.Parameter of C ones, bias: one of C zeros; num_groups, num_channels, eps and
    affine kept as attributes of those names.

    [initial] The scale starts at one and the shift at zero, as torch's, so that an untrained
    layer passes the normalized input through unchanged; training moves them from there.

    [initial] weight₀ = 1 and bias₀ = 0 in every one of the C channels, the same in every run, never
    random.
    """
    for args in ((2, 6), (3, 6, 1e-3)):
        mine, ref = kata.GroupNorm(*args), nn.GroupNorm(*args)
        have, want = dict(mine.named_parameters()), dict(ref.named_parameters())
        given = describe_call("GroupNorm", *args)
        if set(have) != set(want):
            fail(f"{given} has parameters {sorted(have)}, expected {sorted(want)}.")
        groups, channels = getattr(mine, "num_groups", None), getattr(mine, "num_channels", None)
        if (groups, channels) == (args[1], args[0]):
            fail(
                f"{given} keeps num_groups = {groups} and num_channels = {channels}: the two "
                "are swapped. torch's order is GroupNorm(num_groups, num_channels, eps, affine)."
            )
        for name, p in want.items():
            if have[name].shape != p.shape:
                fail(
                    f"{given}.{name} has shape {tuple(have[name].shape)}, expected "
                    f"{tuple(p.shape)}: one value per channel, not per group."
                )
            expect_close(have[name], p.detach(), given=given, what=f"initial {name}")
        for attr in ("num_groups", "num_channels", "eps", "affine"):
            if getattr(mine, attr, "missing") != getattr(ref, attr):
                fail(
                    f"{given}.{attr} is {getattr(mine, attr, 'missing')!r}, "
                    f"expected {getattr(ref, attr)!r}."
                )


def test_state_dict_round_trip(kata):
    """state_dict loads from nn.GroupNorm and into it, both ways

    A checkpoint trained with nn.GroupNorm must load into your module, and yours into
    nn.GroupNorm: the same keys, shapes and dtypes, and no extra state.

    Use torch's names and shapes: weight and bias, each of shape (num_channels,).
    """
    for args in ((2, 6), (4, 8)):
        given = describe_call("GroupNorm", *args)
        expect_state_dict_round_trip(kata.GroupNorm(*args), nn.GroupNorm(*args), given=given)


def test_output_like_input(kata, device):
    """output has the input's shape, dtype and device, for (N, C), (N, C, L) and (N, C, H, W)

    Normalizing changes values, not the shape or the dtype of the tensor.

    Reshape to (N, G, C/G, *) for the statistics and back to x.shape for the result.
    """
    for dtype in (torch.float32, torch.float64):
        for groups, channels, x_shape in CASES:
            mine = kata.GroupNorm(groups, channels)
            mine = mine.to(device, dtype)
            x = torch.randn(x_shape, device=device, dtype=dtype)
            given = f"GroupNorm({groups}, {channels}) on x {shape_of(x)}"
            expect_like(mine(x), x, given=given)


def test_input_unmodified(kata, device):
    """the input tensor is left unmodified

    The caller still owns x: compute into new tensors instead of overwriting it.

    Write x − μ into a new tensor; an in-place subtraction (the -= operator, or a method whose name
    ends in an underscore) writes into the caller's x.
    """
    mine = kata.GroupNorm(2, 6)
    x = torch.randn(3, 6, 5, device=device)
    expect_input_unmodified(mine.to(device), x, given="GroupNorm(2, 6)")


def test_from_scratch(kata, device):
    """implemented from tensor operations, not the built-in group norm

    The exercise is the grouping and the formula: F.group_norm, nn.GroupNorm and the other
    built-in norms (F.layer_norm or F.batch_norm on a reshaped input included) are off limits.

    reshape, mean, var, rsqrt and broadcasting are all you need.
    """
    mine = kata.GroupNorm(2, 6)
    mine = mine.to(device)
    x = torch.randn(3, 6, 5, device=device)
    expect_from_scratch(
        lambda: mine(x), BUILTIN_NORMS, module=mine, forbidden_modules=BUILTIN_NORM_MODULES
    )


def test_vectorized(kata, device):
    """vectorized: no Python loop over samples, groups or channels

    One reshape to (N, G, C/G, *) puts every group of every sample side by side, and one
    reduction over its last dims gives all the statistics at once.

    Seen as (N, G, C/G, *spatial), μ and σ² per sample and group are one reduction each over the
    channel-in-group and spatial dims, broadcast back.
    """
    small = kata.GroupNorm(2, 4)
    large = kata.GroupNorm(16, 64)
    small, large = small.to(device), large.to(device)
    xs, xl = torch.randn(2, 4, 3, device=device), torch.randn(16, 64, 9, device=device)
    expect_vectorized(
        lambda gn, x: gn(x), (small, xs), (large, xl), given="GroupNorm(2, 4) vs GroupNorm(16, 64)"
    )


def test_to_dtype(kata, device):
    """after .to(torch.float64) weight and bias are float64: state is registered, not plain

    .to() moves only registered tensors, parameters and buffers: a tensor kept as a plain
    attribute stays behind, in its old dtype and on its old device.

    nn.Parameter for weight and bias, register_buffer for other state; keep eps a Python float.
    """
    mine = kata.GroupNorm(2, 6)
    mine = mine.to(device, torch.float64)
    expect_registered_state(mine, dtype=torch.float64, given="GroupNorm(2, 6).to(float64)")


def test_statistics_per_sample(kata, device):
    """each sample is normalized with its own statistics, never the batch's

    GroupNorm looks only inside one sample: changing the other samples of the batch must not
    change a sample's output (reducing over dim 0 too is BatchNorm's axis).

    Reduce over the group's channels and positions (dims 2, 3, ... of (N, G, C/G, *)), not 0.
    """
    mine = kata.GroupNorm(3, 6)
    mine = mine.to(device, torch.float64)
    x = torch.randn(4, 6, 5, dtype=torch.float64, device=device) * 2 + 1
    alone = mine(x[:1].clone())
    others = x.clone()
    others[1:] = others[1:] * 10 + 5
    given = f"GroupNorm(3, 6) on x {shape_of(x)}, then with the other samples changed"
    expect_close(mine(others)[:1], alone, given=given, what="the first sample's output")


def test_biased_variance(kata, device):
    """the variance is the biased one (divide by m, not m - 1), as torch uses

    GroupNorm normalizes each group by the spread of its own m values: the population
    variance, not the sample variance.

    σ² = (1/m) Σ (x − μ)² over the group's m = (C/G)·H·W values: divide by m, not m − 1.
    """
    x = torch.tensor([[[1.0], [2.0], [4.0], [7.0]]], dtype=torch.float64, device=device)
    given = (
        "GroupNorm(1, 4, eps=0, affine=False) on the one sample x = [1, 2, 4, 7] (shape (1, 4, 1))"
    )
    mine = affine_off(kata, 1, 4, eps=0.0, given=given).to(device, torch.float64)
    got = expect_tensor(mine(x.clone()))
    if not values_close(got, group_norm_f64(x, 1, 0.0)):
        # The variance is read off one group of all four channels: a layer whose groups are
        # others (per channel, or G channels apiece) is test_one_and_c_groups's mistake.
        spread = torch.randn(1, 4, 3, dtype=torch.float64, device=device)
        if not in_one_group(mine, spread, 0, range(4), given=given):
            fail_for(
                "test_one_and_c_groups",
                f"{given}: with one group, changing one value of a sample does not change all "
                "of that sample's outputs, so its four channels are not one group; this check "
                "reads the variance off that group.",
            )
    expect_close(got, group_norm_f64(x, 1, 0.0), given=given, judge_dtype=False, judge_shape=False)


def test_one_and_c_groups(kata, device):
    """G = 1 takes the statistics over the whole sample (C, *), G = C over each channel alone

    The two ends of GroupNorm: one group holding every channel normalizes the whole sample, as
    LayerNorm over (C, *) does; one group per channel normalizes each channel over its
    positions, as InstanceNorm does. Both take the statistics over the positions as well as
    the group's channels.

    dims = every dim of (N, G, C/G, *) from 2 on: the group's channels and all positions.
    """
    # Which values form a group, read off which outputs move when one input does (through the
    # group's mean and variance): how the group is normalized is other checks' business.
    x = torch.randn(3, 6, 4, 5, dtype=torch.float64, device=device) * 2 + 1
    given = f"GroupNorm(1, 6, eps=0, affine=False) on x {shape_of(x)}"
    one = affine_off(kata, 1, 6, eps=0.0, given=given).to(device, torch.float64)
    expect_group(one, x, 2, range(6), given=given)
    given = f"GroupNorm(6, 6, eps=0, affine=False) on x {shape_of(x)}"
    each = affine_off(kata, 6, 6, eps=0.0, given=given).to(device, torch.float64)
    for channel in (0, 4):
        expect_group(each, x, channel, [channel], given=given)


def test_groups_are_contiguous_channels(kata, device):
    """group g holds the consecutive channels g·C/G ... (g+1)·C/G − 1

    Reshaping (N, C, *) to (N, G, C/G, *) keeps neighbouring channels together, as torch does;
    (N, C/G, G, *) would group every G-th channel instead.

    Reshape x to (N, G, C/G, *spatial): dim 1 then indexes the group and dim 2 the channel within
    it, so channel c lands in group ⌊c / (C/G)⌋.
    """
    # Which channels form a group, read off which outputs move when one input does (through
    # the group's mean and variance): how the group is normalized is other checks' business.
    # Channels 0 and 3, the first of one group and the second of another. The default eps:
    # without one, a group of two values (a layer that groups channels at each position
    # apart, one check's mistake) normalizes to ±1 whatever they are, and would not move.
    x = torch.randn(2, 6, 5, dtype=torch.float64, device=device)
    given = f"GroupNorm(3, 6, affine=False) on x {shape_of(x)}"
    mine = affine_off(kata, 3, 6, given=given).to(device, torch.float64)
    expect_group(mine, x, 0, [0, 1], given=given, positions=False)
    expect_group(mine, x, 3, [2, 3], given=given, positions=False)


def test_eps_inside_sqrt(kata, device):
    """eps is added to the variance, inside the square root

    eps guards the variance before the square root; the two placements differ most when a
    group's variance is small.

    Divide by sqrt(var + eps), not by sqrt(var) + eps.
    """

    def make(eps):
        given = describe_call("GroupNorm", 2, 4, eps=eps, affine=False)
        return affine_off(kata, 2, 4, eps=eps, given=given).to(device, torch.float64)

    def name(eps):
        return describe_call("GroupNorm", 2, 4, eps=eps, affine=False)

    x = torch.randn(3, 4, 5, dtype=torch.float64, device=device) * 0.1
    expect_eps_in_the_root(
        make,
        x,
        0.05,
        lambda x, eps: group_norm_f64(x, 2, eps),
        name=name,
        given=f"small inputs x {shape_of(x)}",
    )


def test_no_affine(kata, device):
    """affine=False: the layer has no parameters; weight and bias are None

    Without the affine transform the layer has nothing to learn, but the attributes still
    exist, and its state_dict is empty like torch's.

    Register weight and bias as parameters whose value is None: both attributes exist, the module
    lists no parameters, and the output is x̂ itself.
    """
    mine, given = kata.GroupNorm(2, 6, affine=False), "GroupNorm(2, 6, affine=False)"
    if list(mine.parameters()):
        fail(f"{given} should have no parameters.")
    with_affine = kata.GroupNorm(2, 6)
    expect_no_weight_and_bias(mine, given=given, with_affine=with_affine)
    ref_off = nn.GroupNorm(2, 6, affine=False)
    expect_affine_state_dropped(with_affine, mine, nn.GroupNorm(2, 6), ref_off, given=given)
    # Against the layer's own output with affine: what the layer normalizes with is other
    # checks' business, and the affine's shape and values the parameters check's; that nothing
    # scales or shifts the output without affine is this one's.
    x = torch.randn(3, 6, 4, device=device) * 2 + 1
    expect_unscaled(
        mine.to(device)(x.clone()),
        with_affine.to(device)(x.clone()),
        dims=(1,),
        given=f"{given} and your GroupNorm(2, 6) on x {shape_of(x)}",
    )


def test_numerically_stable(kata, device):
    """stable in float32 when a group has a large mean (no E[x²] - E[x]² shortcut)

    E[x²] - E[x]² subtracts two huge, nearly equal numbers and loses every significant digit
    in float32 when the mean is large compared with the spread.

    Centre first, then average the squares: xc = g - mean; var = mean(xc²).
    """
    x = 1000 + torch.randn(4, 8, 64, device=device)
    given = f"GroupNorm(2, 8, affine=False) on x = 1000 + randn {shape_of(x)}"
    mine = affine_off(kata, 2, 8, given=given).to(device)
    expect_stable_under_shift(mine, x, 1000, given=given)


def test_same_in_eval_mode(kata, device):
    """eval mode normalizes each sample with its own statistics, exactly as training does

    GroupNorm keeps no running statistics: a model switched to eval() must give the same
    output as in training, for any input, unlike BatchNorm.

    Compute μ and σ² from x on every call, in training and in eval alike; register no buffers.
    """
    # Against the layer's own output in training mode: how it normalizes is other checks'
    # business, that eval mode does the same is this one's.
    mine = kata.GroupNorm(3, 6)
    mine = mine.to(device, torch.float64)
    mine(torch.randn(4, 6, 5, dtype=torch.float64, device=device))  # a training call first
    x = torch.randn(4, 6, 5, dtype=torch.float64, device=device) * 3 + 2
    in_eval = expect_tensor(mine.eval()(x.clone())).detach()
    in_training = expect_tensor(mine.train()(x.clone())).detach()
    given = (
        f"GroupNorm(3, 6) in eval mode, after a training call, on another x {shape_of(x)}, "
        "against its own output in training mode"
    )
    expect_close(in_eval, in_training, given=given, judge_dtype=False, equal_nan=False)


def test_follows_device(kata, device):
    """runs on CUDA: parameters move with .to(device), nothing is created on the CPU

    Every tensor forward creates must live on the input's device, and all state must move
    with .to(device).

    Make weight and bias Parameters, so that .to(device) moves them; a tensor forward creates is
    made on x's device, or derived from x.
    """
    for kwargs in ({}, {"affine": False}):
        mine = kata.GroupNorm(2, 6, **kwargs)
        x = torch.randn(3, 6, 5)
        expect_follows_device(
            mine, x, device=device, given=describe_call("GroupNorm", 2, 6, **kwargs)
        )


@pytest.mark.broad
def test_forward_matches_torch(kata, device):
    """forward matches nn.GroupNorm for G = 1, a divisor of C and C, over several ranks and eps

    Each sample's channels are split into G consecutive groups, each normalized over its
    channels and positions, then scaled and shifted per channel.

    y = (x - mean) / sqrt(var + eps) * weight[c] + bias[c], statistics per sample and group.
    """
    # eps = 0.1 as well: at float32's tolerance, which float64 is held to too, the default
    # 1e-5 hides where eps goes.
    for dtype in (torch.float32, torch.float64):
        for eps in (1e-5, 0.1):
            for groups, channels, x_shape in CASES:
                mine, ref = paired(kata, "GroupNorm", groups, channels, eps=eps)
                mine, ref = mine.to(device, dtype), ref.to(device, dtype)
                x = torch.randn(x_shape, device=device, dtype=dtype) * 3 + 1
                given = (
                    f"{describe_call('GroupNorm', groups, channels, eps=eps)} on x {shape_of(x)}"
                )
                # float32 groups of only two values amplify rounding: compare where it is fair.
                if dtype == torch.float32 and x.numel() // x.shape[0] // groups < 8:
                    continue
                expect_close(mine(x.clone()), ref(x).detach(), given=given)


@pytest.mark.broad
def test_gradients_match(kata, device):
    """gradients for the input, weight and bias match torch's

    Build forward from differentiable tensor operations and autograd does the rest; the mean
    and variance must stay in the graph.

    No .detach(), .data or in-place edits on the path from x to the output.
    """
    mine, ref = paired(kata, "GroupNorm", 2, 6)
    expect_same_grads_in_float64(mine, ref, (3, 6, 5), device=device, given="GroupNorm(2, 6)")


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """a float64 input is computed in float64, as torch does, not rounded through float32

    torch computes the statistics in float32 only for float16 and bfloat16 inputs; upcasting every
    input to float32, as fairseq's Fp32GroupNorm does, also rounds a float64 input to float32.

    compute dtype = float32 for float16/bfloat16 inputs, x.dtype otherwise: upcast only those.
    """
    mine, ref = paired(kata, "GroupNorm", 2, 6)
    mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
    x = torch.randn(3, 6, 5, dtype=torch.float64, device=device)
    given = f"GroupNorm(2, 6).to(float64) on x {shape_of(x)}"
    expect_float64_arithmetic(mine, x, given=given, reference=ref(x).detach())


@pytest.mark.parity
def test_indivisible_channels_raise(kata):
    """num_channels indivisible by num_groups raises ValueError in __init__, as torch does

    Groups must all have C / G channels: a layer that cannot be built that way is rejected
    when it is constructed, not later in forward.

    In the constructor, when num_channels mod num_groups is not 0, fail with a ValueError that names
    both numbers.
    """
    for args in ((4, 6), (5, 8)):
        given = describe_call("GroupNorm", *args)
        expect_raises(ValueError, lambda args=args: kata.GroupNorm(*args), given=given)


@pytest.mark.parity
def test_indivisible_channels_message(kata):
    """the divisibility error has torch's message, naming num_channels and num_groups

    Code that catches or logs the error, and a learner comparing with nn.GroupNorm, see the same
    text as torch's; torch 2.4's shorter wording without the numbers is accepted too.

    ValueError(f"num_channels ({C}) must be divisible by num_groups ({G})").
    """
    for groups, channels in ((4, 6), (5, 8)):
        given = describe_call("GroupNorm", groups, channels)
        error = expect_raises(
            ValueError, lambda g=groups, c=channels: kata.GroupNorm(g, c), given=given
        )
        torch_texts = (  # torch 2.13's wording, then torch 2.4's (nn/modules/normalization.py)
            f"num_channels ({channels}) must be divisible by num_groups ({groups})",
            "num_channels must be divisible by num_groups",
        )
        if str(error) not in torch_texts:
            fail(
                f"{given}: the ValueError says {str(error)!r}; nn.GroupNorm's says "
                f"{torch_texts[0]!r} (torch 2.4: {torch_texts[1]!r})."
            )


@pytest.mark.parity
def test_noncontiguous_input(kata, device):
    """a non-contiguous input works: a transposed x is normalized as its contiguous copy is

    Inputs often arrive as views: a sequence model's (N, L, C) transposed to (N, C, L), an image
    with H and W swapped. Their elements are not laid out one after the other, so a view that
    merges a group's channels with the positions fails, where torch normalizes them like any
    other input.

    Split the channels into (G, C/G) and reduce over the group's dims as they are, or flatten
    with reshape, which copies when it must: a view of x needs a contiguous layout.
    """
    # Against the layer's own output for the same values laid out contiguously: what it
    # computes is other checks' business, that the layout does not matter is this one's.
    for made, transposed, how in (
        ((3, 5, 6), (1, 2), "(N, L, C) transposed"),
        ((2, 6, 5, 4), (2, 3), "H and W transposed"),
    ):
        mine = kata.GroupNorm(2, 6).to(device)
        x = torch.randn(made, device=device).transpose(*transposed)
        given = f"GroupNorm(2, 6) on x {shape_of(x)}, {how} (non-contiguous)"
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
    """half-precision inputs work, computed in float32 and returned in the input's dtype

    float16 and bfloat16 have few mantissa bits and float16 overflows above 65504: a group mean
    of x = 384 + randn rounded to float16 shifts every value. torch computes the statistics in
    float32 and gives the caller back the dtype it passed in.

    Compute the statistics and x̂ on a float32 copy of the grouped input, then cast the result back
    to x's dtype before it leaves forward.
    """
    name = str(dtype).removeprefix("torch.")
    mine, ref = paired(kata, "GroupNorm", 2, 8)
    mine = mine.to(device, dtype)
    x = (torch.randn(4, 8, 16, device=device) * 3).to(dtype)
    expected = group_norm_f64(x, 2, 1e-5, ref.weight.to(dtype), ref.bias.to(dtype)).to(dtype)
    given = f"GroupNorm(2, 8).to({name}) on x {shape_of(x)}"
    expect_close(mine(x), expected, given=given, rtol=2e-2, atol=2e-2)
    # Far from zero, with the initial weight and bias (exact in any precision, so that only the
    # statistics show): the float64 formula rounded once, which float32 statistics rounded once
    # meet within an ulp. 2 ulps is the bound; statistics in half precision miss it many times.
    offset = HALF_OFFSET[dtype]
    mine = torch_initialised(kata, "GroupNorm", 2, 8).to(device, dtype)
    x = (offset + torch.randn(4, 8, 16, device=device)).to(dtype)
    expected = group_norm_f64(x, 2, 1e-5)
    given = f"GroupNorm(2, 8).to({name}) on x = {offset:g} + randn {shape_of(x)}"
    expect_rounded_once(mine(x), {}, expected, {}, dtype=dtype, given=given)


@pytest.mark.parity
def test_empty_batch(kata, device):
    """an empty batch (N = 0) gives an empty output, as torch's does

    A batch of zero samples is valid: there are no groups to normalize, and nothing to fail.

    Keep N in the reshape and spell out every size, (N, G, C/G, *spatial); a size left for the
    reshape to infer (−1) cannot be inferred from 0 elements.
    """
    for x_shape in ((0, 6, 4), (0, 6)):
        mine, ref = paired(kata, "GroupNorm", 3, 6)
        mine, ref = mine.to(device), ref.to(device)
        x = torch.randn(x_shape, device=device)
        expect_close(mine(x.clone()), ref(x).detach(), given=f"GroupNorm(3, 6) on x {shape_of(x)}")


def moved_by(layer, x, channel, group, *, given, pair=False):
    """Within sample 0, which outputs change when x[0, channel, 0, ...] does, one row per
    channel (see influence); with `pair`, while another value of its group (another of the
    group's channels, or the channel's next position) moves back by as much, so that only the
    group's variance carries the change."""
    index = (0, channel) + (0,) * (x.dim() - 2)
    others = [c for c in group if c != channel]
    counter = (0, others[0]) + (0,) * (x.dim() - 2) if others else (0, channel, 1)
    moved = influence(layer, x, index, given=given, counter=counter if pair else None)
    return moved[0].reshape(x.shape[1], -1)


def in_one_group(layer, x, channel, group, *, given):
    """Whether changing x[0, channel, 0, ...] (alone, then with a value of its group moved back)
    changes, within sample 0, every output of the channels in `group` and no other."""
    for pair in (False, True):
        moved = moved_by(layer, x, channel, group, given=given, pair=pair)
        want = torch.zeros_like(moved)
        want[list(group)] = True
        if not torch.equal(moved, want):
            return False
    return True


def expect_group(layer, x, channel, group, *, given, positions=True):
    """Within sample 0 of x, the outputs that change when x[0, channel, 0, ...] does (alone, and
    with another value of its group moved back, the group's mean unchanged) are those of the
    channels in `group` and no other: that value's group, whose mean and variance it moves.
    With `positions`, every position of those channels too; without, which channels only
    (whether a group spans the positions is test_one_and_c_groups's)."""
    for pair in (False, True):
        moved = moved_by(layer, x, channel, group, given=given, pair=pair)
        channels = [c for c in range(x.shape[1]) if moved[c].any()]
        some = [c for c in channels if not moved[c].all()]
        if channels == list(group) and not (positions and some):
            continue
        where = f"x[0, {channel}{', 0' * (x.dim() - 2)}]"
        if pair:
            back = [c for c in group if c != channel]
            where += (
                f" up and x[0, {back[0]}{', 0' * (x.dim() - 2)}] down as much (the group's mean"
                " unchanged, its variance not)"
                if back
                else f" up and x[0, {channel}, 1{', 0' * (x.dim() - 3)}] down as much (the "
                "group's mean unchanged, its variance not)"
            )
        said = f"changing {where} changed the outputs of channels {channels} of that sample"
        if positions and some:
            said += f", those of channels {some} at some positions only"
        fail(
            f"{given}: {said}; expected every output of channels {list(group)}, the channels "
            "of its group (whose mean and variance it moves, over all their positions), and "
            "no other."
        )


def affine_off(kata, *args, given, **kwargs):
    """kata.GroupNorm(*args, affine=False, **kwargs), for a check of the normalization alone: a
    forward that fails on its None weight or bias is test_no_affine's mistake."""
    layer = kata.GroupNorm(*args, affine=False, **kwargs)
    return without_affine(layer, given=given, owner="test_no_affine")


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your GroupNorm and nn.GroupNorm on a batch of feature maps."""
    shape, groups = ((32, 256, 56, 56), 32) if device.type == "cuda" else ((16, 64, 32, 32), 8)
    mine, ref = paired(kata, "GroupNorm", groups, shape[1])
    mine, ref = mine.to(device), ref.to(device)
    x = torch.randn(shape, device=device, requires_grad=True)
    given = f"GroupNorm({groups}, {shape[1]}) on x {shape_of(x)}"
    return PerfCase.of_layers(given, mine, ref, x, builtin_name="nn.GroupNorm")
