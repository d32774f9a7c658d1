"""Hidden checks for the BatchNorm-folding kata: fuse_conv_bn_eval and fuse_linear_bn_eval,
against torch.nn.utils.fusion's behaviour and the fold's formula in float64.

The interview core first: the fold's maths read off the fused weight and bias, each property on
its own (the scale along the output channels, γ / √σ², ε inside the root, the mean in the bias,
a missing conv bias, affine=False), most of them by comparing two of the learner's own folds
that must agree, so that a check sees its own mistake and no other; a new module of the
original's class, the originals untouched, the running statistics, a plain convolution. Then
torch parity (@pytest.mark.parity): training mode raises, Parameters with the original's
requires_grad, eval mode, float64 and the device. The modules are small and each check folds a
few of them: pure tensor work. The values are checked on the CPU whatever --device says (a GPU
runs float32 convolutions in TF32); test_follows_device folds on the device.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import fusion

from norm_katas.checks import (
    PerfCase,
    Suite,
    describe_call,
    expect_built_on_device,
    expect_close,
    expect_from_scratch,
    expect_raises,
    expect_tensor,
    fail,
    fail_for,
    nonzero_values,
    shape_of,
    values_close,
)

SUITE = Suite()


@SUITE.note
def device_note(device):
    """On a GPU: only the device check runs there; the fold's values are checked on the CPU."""
    if device.type == "cpu":
        return None
    return (
        f"The fold's values are checked on the CPU, where float32 convolutions are exact to "
        f"float32 (a GPU's run in TF32 by default); the device check folds on {device.type}."
    )


# torch's own fold, in Python: what the learner writes instead of calling.
TORCH_FUSION = (
    fusion.fuse_conv_bn_eval,
    fusion.fuse_conv_bn_weights,
    fusion.fuse_linear_bn_eval,
    fusion.fuse_linear_bn_weights,
)
FUSE = {nn.Conv2d: "fuse_conv_bn_eval", nn.Linear: "fuse_linear_bn_eval"}
# What a fused module must keep of the original: copy.deepcopy keeps them all.
KEPT = {
    nn.Conv2d: (
        "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
        "padding_mode",
    ),
    nn.Linear: ("in_features", "out_features"),
}  # fmt: skip
# Conv2d(in, out, kernel, **options): a plain conv, a strided and dilated grouped one, a
# depthwise one (groups = in_channels), whose weight is (C, 1, kH, kW), and one with as many
# output channels as input channels, where a scale along dim 1 fits the weight too; and one
# that pads by reflection, a setting a conv built anew loses unless it is passed on.
CONVS = (
    (4, 6, 3, {"padding": 1}),
    (4, 6, 3, {"stride": 2, "dilation": 2, "groups": 2}),
    (4, 4, 3, {"padding": 1, "groups": 4}),
    (4, 4, 1, {}),
    (4, 6, 3, {"padding": 1, "padding_mode": "reflect"}),
)


def test_scale_along_output_channels(kata):
    """each output channel's weights are scaled by one factor: the scale runs along dim 0

    The BatchNorm scales each output channel of the layer, so the fold scales each output
    channel's whole filter: every weight that feeds channel c, whatever input channel or kernel
    position it reads, gets channel c's factor. A Linear's weight is (out_features,
    in_features): a vector of out_features values lines up with its last dim, the inputs,
    unless it is turned into a column first.

    W′[c, …] = s[c] · W[c, …] with s of size C_out along dim 0 of W: shaped (C_out, 1, 1, 1)
    for a conv's weight (C_out, C_in/groups, kH, kW), (C_out, 1) for a Linear's.
    """
    for kind, case in (("conv", 3), ("conv", 2), ("linear", 0), ("wide", 0)):
        original, bn, given = pair(kind, case)
        weight = original.weight.detach().clone()
        fused = fuse(kata, original, bn, given=given)
        got = tensor_of(fused, "weight", given=given)
        if got.shape != weight.shape:
            fail(
                f"{given}: the fused weight has shape {tuple(got.shape)}, the original's "
                f"{tuple(weight.shape)}: the scale of {weight.shape[0]} values broadcast along "
                "another dim than dim 0. Shape it with the output channels first and ones after."
            )
        ratio = (got.double() / weight.double()).reshape(weight.shape[0], -1)
        spread = ratio.amax(1) - ratio.amin(1)
        c = int(spread.argmax())
        if not values_close(ratio, ratio[:, :1].expand_as(ratio)):
            fail(
                f"{given}: the fused weight divided by the original's varies within output "
                f"channel {c}, from {ratio[c].min().item():.6g} to {ratio[c].max().item():.6g}, "
                "where one scale per output channel is expected: the scale ran along another "
                "dim than dim 0 (a Linear's weight is (out_features, in_features), so a vector "
                "times it lines up with the inputs)."
            )


def test_returns_layer_like_the_original(kata):
    """returns an nn.Conv2d (nn.Linear) built like the original: sizes, stride, padding, groups

    The fold's result replaces the conv and the BatchNorm in the network: one layer that takes
    the same input and gives the same output shape, so everything the conv was built with is
    kept. A copy of the conv keeps it all; a conv built anew must be given every setting.

    The fused module is of the original's class, with its in_channels, out_channels,
    kernel_size, stride, padding, dilation, groups and padding_mode (in_features and
    out_features for a Linear), and only its weight and bias changed.
    """
    for kind, case in (("conv", 0), ("conv", 1), ("conv", 2), ("conv", 4), ("linear", 0)):
        original, bn, given = pair(kind, case)
        fused = getattr(kata, FUSE[type(original)])(original, bn)
        if (problem := not_a_layer(fused, original)) is not None:
            fail(f"{given}: {problem}")
        for name in KEPT[type(original)]:
            want, got = getattr(original, name), getattr(fused, name, "missing")
            if got != want:
                fail(
                    f"{given}: the fused {type(original).__name__}'s {name} is {got}, the "
                    f"original's {want}: build it like the original (copy.deepcopy keeps "
                    "every setting)."
                )


def test_from_scratch(kata):
    """the fold is computed from tensor operations, not torch's fusion

    The exercise is the fold itself: torch.nn.utils.fusion (fuse_conv_bn_eval,
    fuse_conv_bn_weights and the Linear ones), and torch.ao's fuse_modules or torch.fx's fuse
    that call them, are off limits here.

    A copy of the layer (copy.deepcopy), the scale γ / √(σ² + ε), a multiplication and an
    addition are all it takes.
    """
    advice = "The kata is to fold the BatchNorm yourself, with tensor operations."
    for kind in ("conv", "linear"):
        original, bn, _ = pair(kind)
        name = FUSE[type(original)]
        expect_from_scratch(
            lambda original=original, bn=bn, name=name: getattr(kata, name)(original, bn),
            frozenset(),
            forbidden_functions=TORCH_FUSION,
            advice=advice,
            who=name,
        )


def test_originals_untouched(kata):
    """the conv (Linear) and the BatchNorm are left as they were; the result has tensors of its own

    The caller still owns both modules: folding must not edit their weights, buffers or flags,
    and the new module must hold tensors of its own, or a later in-place update of one (an
    optimizer step while fine-tuning the fused network) would change the other. A shallow copy
    of a module shares its dict of parameters: assigning a new weight to it replaces the
    original's too.

    Compute W′ and b′ as new tensors (the product W · s is one) and give them to a deep copy,
    or to a layer built anew; never scale the original's tensors in place.
    """
    # Without a bias the fold must make one: it cannot be taken from the BatchNorm.
    for kind, bias in (("conv", True), ("linear", True), ("conv", False), ("linear", False)):
        original, bn, given = pair(kind, bias=bias)
        before = {
            **{f"the original's {k}": v.clone() for k, v in original.state_dict().items()},
            **{f"the BatchNorm's {k}": v.clone() for k, v in bn.state_dict().items()},
        }
        flags = [m.training for m in (original, bn)]
        grads = [p.requires_grad for p in (*original.parameters(), *bn.parameters())]
        if bias:
            fused = fuse(kata, original, bn, given=given)
        else:
            try:
                fused = fuse(kata, original, bn, given=given)
            except Exception:  # a fold that cannot take a missing bias: test_without_bias's
                continue
        after = {
            **{f"the original's {k}": v for k, v in original.state_dict().items()},
            **{f"the BatchNorm's {k}": v for k, v in bn.state_dict().items()},
        }
        mine = {id(t) for t in (*fused.parameters(), *fused.buffers())}
        for n, t in (*original.named_parameters(), *original.named_buffers()):
            if fused is not original and id(t) in mine:
                fail(
                    f"{given}: the original's {n} is now the fused module's own tensor, so the "
                    "original computes the fused layer's output. A shallow copy (copy.copy) "
                    "shares the module's parameters: assigning to the copy's replaces the "
                    "original's. Copy with copy.deepcopy, or build a new layer."
                )
        for n, t in (*bn.named_parameters(), *bn.named_buffers()):
            if id(t) in mine:
                fail(
                    f"{given}: the BatchNorm's {n} is now the fused module's own tensor, so "
                    "setting the fused value changes the BatchNorm, and fine-tuning one "
                    "changes the other. Give the fused module a new nn.Parameter."
                )
        for name, value in before.items():
            now = after.get(name)
            if now is None or now.shape != value.shape or not torch.equal(now, value):
                fail(
                    f"{given}: {name} changed. Leave the original modules as they were: "
                    "compute the fused weight and bias as new tensors, and give them to a "
                    "copy (copy.deepcopy: copy.copy shares the parameters)."
                )
        if fused is original:
            fail(f"{given}: it returned the original module itself; return a new one.")
        if [m.training for m in (original, bn)] != flags:
            fail(f"{given}: a module's training flag changed; leave the modules' modes alone.")
        if [p.requires_grad for p in (*original.parameters(), *bn.parameters())] != grads:
            fail(f"{given}: a parameter's requires_grad changed in the original modules.")
        theirs = {
            t.untyped_storage().data_ptr(): f"{owner}'s {n}"
            for owner, module in (("the original", original), ("the BatchNorm", bn))
            for n, t in (*module.named_parameters(), *module.named_buffers())
            if t.numel()
        }
        for n, t in (*fused.named_parameters(), *fused.named_buffers()):
            if t.numel() and (shared := theirs.get(t.untyped_storage().data_ptr())):
                fail(
                    f"{given}: the fused module's {n} shares memory with {shared}, so an "
                    "in-place update of one (an optimizer step) changes the other. Give the "
                    "fused module tensors of its own."
                )


def test_uses_running_statistics(kata):
    """each sample's output is its own: the fold uses the running statistics, not the batch's

    In eval mode a BatchNorm normalizes with the mean and variance it kept while training, the
    same for every batch, so the fused layer treats each sample alone. Normalizing with the
    batch's own mean and variance is training mode's maths, and makes a sample's output depend
    on the others in its batch.

    μ and σ² are bn.running_mean and bn.running_var, fixed numbers folded into W′ and b′: no
    statistic of the input is taken at all.
    """
    for kind in ("conv", "linear"):
        original, bn, given = pair(kind)
        fused = fuse(kata, original, bn, given=given)
        x = input_for(original, batch=4)
        alone = expect_tensor(fused(x[:1].clone())).detach()
        others = x.clone()
        others[1:] = others[1:] * 10 + 5
        expect_close(
            expect_tensor(fused(others))[:1],
            alone,
            given=f"{given}, run on x {shape_of(x)}, then on its first sample alone",
            what="the first sample's output",
            judge_dtype=False,
            equal_nan=False,
        )


def test_plain_layer(kata):
    """the fused module computes with its own weight and bias alone, nothing after it

    The point of the fold is one layer: the fused conv's forward is the ordinary convolution
    with the folded weight and bias, as fast as the conv alone. A layer that keeps the old
    weight and applies the BatchNorm's scale and shift after the convolution gives the same
    numbers, and saves nothing.

    fused(x) = conv2d(x, W′, b′) with the conv's stride, padding, dilation and groups (x W′ᵀ + b′
    for a Linear), W′ and b′ being the module's own weight and bias.
    """
    for kind in ("conv", "linear"):
        original, bn, given = pair(kind)
        fused = fuse(kata, original, bn, given=given)
        x = input_for(original)
        w, b = tensor_of(fused, "weight", given=given), getattr(fused, "bias", None)
        b = b.detach() if isinstance(b, torch.Tensor) else None
        if isinstance(original, nn.Conv2d):
            plain = F.conv2d(x, w, b, fused.stride, fused.padding, fused.dilation, fused.groups)
            name = "the convolution with its own weight and bias"
        else:
            plain = F.linear(x, w, b)
            name = "x Wᵀ + b with its own weight and bias"
        expect_close(
            fused(x),
            plain,
            given=f"{given} on x {shape_of(x)}, against {name}",
            judge_dtype=False,
        )


def test_scale_is_gamma_over_std(kata):
    """the weight is scaled by γ / √σ² per channel (eps = 0 here)

    The BatchNorm divides each channel by its running standard deviation and multiplies it by
    its weight γ: the fold scales the channel's filter by the ratio of the two. The running
    variance is a variance: its square root is the standard deviation. With eps = 0 this check
    sees the scale alone, wherever eps would go.

    s[c] = γ[c] / √σ²[c], read here as the fused weight divided by the original's for each
    output channel.
    """
    for kind in ("conv", "linear"):
        original, bn, given = pair(kind, eps=0.0)
        weight = original.weight.detach().clone()
        want = bn.weight.detach().double() / bn.running_var.double().sqrt()
        fused = fuse(kata, original, bn, given=given)
        expect_close(
            scale_of(fused, weight, given=given),
            want,
            given=given,
            what="the scale of each output channel (the fused weight ÷ the original's)",
            judge_dtype=False,
        )


def test_eps_inside_sqrt(kata):
    """eps is added to the running variance inside the square root: √(σ² + ε)

    ε keeps the division finite where a channel's running variance is zero; the BatchNorm adds
    it to the variance before the square root, and so must the fold. The two placements differ
    most where ε is large against the variance: here ε = 0.5 and σ² about 0.1.

    s = γ / √(σ² + ε): a fold with ε = 0.5 equals the same fold with ε = 0 and a running
    variance of σ² + 0.5, which is what this compares, your fold against your fold.
    """
    for kind in ("conv", "linear"):
        original, bn, given = pair(kind, eps=0.5, var=(0.05, 0.2))
        twin, twin_bn = copy.deepcopy(original), copy.deepcopy(bn)
        twin_bn.eps = 0.0
        with torch.no_grad():
            twin_bn.running_var.add_(0.5)
        fused = fuse(kata, original, bn, given=given)
        other = fuse(kata, twin, twin_bn, given=given.replace("eps=0.5", "eps=0.0"))
        against = (
            f"{given}, against your fold with eps=0.0 and running_var + 0.5 (the same "
            "√(σ² + ε) where ε goes inside the root)"
        )
        small, small_bn = copy.deepcopy(original), copy.deepcopy(bn)
        small_bn.eps = 1e-5
        unmoved = fuse(kata, small, small_bn, given=given.replace("eps=0.5", "eps=1e-05"))
        weight = tensor_of(fused, "weight", given=given)
        # Where the fold scales the weight at all (else the scale checks' mistake).
        scaled = not values_close(weight, original.weight.detach())
        if scaled and values_close(weight, unmoved.weight.detach()):
            fail(
                f"{given}: the fused weight is the same as with eps=1e-05: the fold does not "
                "use the BatchNorm's eps. Take ε from bn.eps, not a constant."
            )
        for name in ("weight", "bias"):
            expect_close(
                tensor_of(fused, name, given=given),
                tensor_of(other, name, given=given),
                given=against,
                what=f"the fused {name}",
                equal_nan=False,
            )


def test_bias_subtracts_running_mean(kata):
    """the running mean is subtracted from the layer's bias before the scale: b′ = (b − μ) · s + β

    The BatchNorm centres the layer's output z = W ⋆ x + b on its running mean before scaling
    it: z − μ = W ⋆ x + (b − μ). The mean therefore joins the bias, and is scaled with it; the
    weight never sees it.

    b′ = (b − μ) · s + β: a layer with bias b and a BatchNorm with mean μ fold as a layer with
    bias b − μ and a BatchNorm with mean 0, which is what this compares, your fold against your
    fold.
    """
    for kind in ("conv", "linear"):
        original, bn, given = pair(kind)
        twin, twin_bn = copy.deepcopy(original), copy.deepcopy(bn)
        with torch.no_grad():
            twin.bias.sub_(bn.running_mean)
            twin_bn.running_mean.zero_()
        fused = fuse(kata, original, bn, given=given)
        other = fuse(kata, twin, twin_bn, given=f"{given} with running_mean 0")
        expect_close(
            tensor_of(fused, "bias", given=given),
            tensor_of(other, "bias", given=given),
            given=(
                f"{given}, against your fold of the same layer with bias b − μ and a "
                "BatchNorm with running_mean 0 (the same b − μ)"
            ),
            what="the fused bias",
            equal_nan=False,
        )


def test_without_bias(kata):
    """a conv (Linear) with bias=False folds like one with a zero bias, into a module with a bias

    A layer built with bias=False has bias None, and the BatchNorm's shift still has to go
    somewhere: the fused layer gets a bias of its own. Where the conv has none, treat it as
    zero.

    b′ = (0 − μ) · s + β = β − μ · s: your fold of the layer without a bias is compared with
    your fold of the same layer with a bias of zeros.
    """
    for kind in ("conv", "linear"):
        original, bn, given = pair(kind, bias=False)
        twin, twin_bn = copy.deepcopy(original), copy.deepcopy(bn)
        twin.bias = nn.Parameter(torch.zeros(original.weight.shape[0]))
        fused = fuse(kata, original, bn, given=given)
        if getattr(fused, "bias", None) is None:
            fail(
                f"{given}: the fused module has no bias, so the BatchNorm's shift β − μ · s "
                "has nowhere to go. Give it a bias: the original's counts as zero."
            )
        other = fuse(kata, twin, twin_bn, given=given.replace("bias=False", "zeros"))
        against = f"{given}, against your fold of the same layer with a bias of zeros"
        for name in ("weight", "bias"):
            expect_close(
                tensor_of(fused, name, given=given),
                tensor_of(other, name, given=given),
                given=against,
                what=f"the fused {name}",
                equal_nan=False,
            )


def test_affine_false(kata):
    """a BatchNorm2d with affine=False folds into the conv as one with weight 1 and bias 0

    Without affine the BatchNorm has no weight or bias (both None): it only normalizes. The fold
    still scales by 1 / √(σ² + ε) and subtracts the mean.

    γ = 1 and β = 0 where bn.weight and bn.bias are None: your fold of a BatchNorm without affine
    is compared with your fold of a BatchNorm holding the same statistics, a weight of ones and
    a bias of zeros.
    """
    # The conv's fold only: torch's fuse_linear_bn_eval takes bn.weight as it is, and raises
    # on a BatchNorm1d without affine (torch 2.4 to 2.13), so the kata asks no more of yours.
    for case in (0, 2):
        original, bn, given = pair("conv", case, affine=False)
        twin, twin_bn = copy.deepcopy(original), type(bn)(bn.num_features).eval()
        twin_bn.load_state_dict(bn.state_dict(), strict=False)
        fused = fuse(kata, original, bn, given=given)
        other = fuse(kata, twin, twin_bn, given=given)
        against = (
            f"{given}, against your fold with a BatchNorm of the same statistics, weight ones "
            "and bias zeros"
        )
        for name in ("weight", "bias"):
            expect_close(
                tensor_of(fused, name, given=given),
                tensor_of(other, name, given=given),
                given=against,
                what=f"the fused {name}",
                equal_nan=False,
            )


@pytest.mark.broad
def test_output_matches_bn_of_conv(kata):
    """the fused layer's output is bn(conv(x)) in eval mode, for convs of every kind and Linears

    Folding changes no output: for any input, the fused layer gives what the conv followed by
    the BatchNorm gave in eval mode, grouped and depthwise convs, layers without a bias and
    BatchNorms without affine included.

    fused(x) = γ · (conv(x) − μ) / √(σ² + ε) + β per output channel, μ and σ² the running
    statistics.
    """
    cases = [
        ("conv", 0, True, {}),
        ("conv", 1, False, {"eps": 0.1}),  # strided, dilated and grouped, eps where it shows
        ("conv", 2, True, {"affine": False}),  # depthwise
        ("conv", 3, False, {}),
        ("wide", 0, True, {}),
        ("wide", 0, False, {"eps": 0.1}),
    ]
    for kind, case, bias, options in cases:
        original, bn, given = pair(kind, case, bias=bias, **options)
        x = input_for(original, dtype=torch.float64)
        want = eval_output(original, bn, x)
        fused = fuse(kata, original, bn, given=given)
        # The fused layer's float32 weight and bias, run in float64 like the expected output:
        # the values are the fold's, and float64 spares each grading a float32 grouped
        # convolution's first call (oneDNN builds its kernel then: 50 ms).
        got = copy.deepcopy(fused).double()(x)
        given = f"{given}, its weight and bias run in float64 on x {shape_of(x)}"
        expect_close(got, want, given=given, judge_dtype=False)


@pytest.mark.parity
def test_training_mode_raises(kata):
    """a module in training mode raises, as torch's fold does

    In training mode the BatchNorm normalizes with each batch's statistics, which no fixed
    weight can hold: torch refuses to fold then ("Fusion only for eval!"), rather than give a
    layer that differs from the pair it replaces. Switching the modules to eval mode behind the
    caller's back changes their model.

    Check conv.training and bn.training first, and raise (an AssertionError as torch's, a
    ValueError or a RuntimeError) when either is set.
    """
    for kind in ("conv", "linear"):
        for training in ((True, False), (False, True)):
            original, bn, given = pair(kind)
            original.train(training[0])
            bn.train(training[1])
            which = "the layer" if training[0] else "the BatchNorm"
            name = FUSE[type(original)]
            expect_raises(
                (AssertionError, ValueError, RuntimeError),
                lambda original=original, bn=bn, name=name: getattr(kata, name)(original, bn),
                given=f"{given} with {which} in training mode",
            )
            if (original.training, bn.training) != training:
                fail(f"{given} with {which} in training mode changed the modules' modes.")


@pytest.mark.parity
def test_folded_parameters(kata):
    """the fused weight and bias are leaf Parameters, registered, with the original's requires_grad

    torch's fold returns nn.Parameters that require grad as the conv's did: a frozen conv folds
    into a frozen conv, and one being fine-tuned into one that can be. A new Parameter requires
    grad whatever tensor it wraps, and a tensor that is not a Parameter is not in the module's
    parameters or state_dict.

    weight′: a Parameter holding W′ whose requires_grad is the original weight's; bias′ likewise
    with the original bias's (either way where the original had none).
    """
    for kind in ("conv", "linear"):
        for frozen, bias in ((False, True), (True, True), (True, False)):
            original, bn, given = pair(kind, bias=bias)
            original.requires_grad_(not frozen)
            given += ", the layer's parameters frozen" if frozen else ""
            fused = fuse(kata, original, bn, given=given)
            registered = dict(fused.named_parameters())
            for name in ("weight", "bias"):
                value = getattr(fused, name, None)
                if not isinstance(value, nn.Parameter) or registered.get(name) is not value:
                    fail(
                        f"{given}: the fused {name} is a {type(value).__name__}, not a "
                        "registered nn.Parameter: the module's parameters, state_dict and "
                        ".to() leave it out."
                    )
                if value.grad_fn is not None:
                    fail(
                        f"{given}: the fused {name} is not a leaf: it was computed from the "
                        "originals' parameters while autograd recorded (its grad_fn is "
                        f"{type(value.grad_fn).__name__}), so a backward through the fused "
                        "module sends gradients into the originals' parameters and leaves the "
                        f"fused {name}'s .grad None. Compute it under torch.no_grad(), or from "
                        ".detach()ed tensors."
                    )
                if name == "bias" and not bias:
                    continue
                want = getattr(original, name).requires_grad
                if value.requires_grad != want:
                    fail(
                        f"{given}: the fused {name} has requires_grad={value.requires_grad}, "
                        f"the original's {want}. nn.Parameter(w) requires grad by default: "
                        "give it the original's requires_grad."
                    )


@pytest.mark.parity
def test_fused_in_eval_mode(kata):
    """the fused module is in eval mode, like the modules it was folded from

    torch's fold returns a copy of the conv, which was in eval mode, so the fused network can
    go on being evaluated without another call to eval(). A module built anew starts in
    training mode.

    training = False on the fused module, as on the conv it replaces: a deep copy keeps it, a
    new module needs eval().
    """
    for kind in ("conv", "linear"):
        original, bn, given = pair(kind)
        fused = fuse(kata, original, bn, given=given)
        if any(m.training for m in fused.modules()):
            fail(f"{given}: the fused module is in training mode; the original was in eval mode.")


@pytest.mark.parity
def test_float64(kata):
    """float64 modules fold into a float64 module, computed in float64

    torch's fold keeps the conv's dtype and computes in it: a float64 network folds into a
    float64 one, to float64's precision, 16 significant digits. A layer built anew is float32
    until told otherwise, and a scale computed in float32 keeps 7 digits.

    W′ and b′ in the original weight's dtype, from arithmetic in that dtype: here within 1e-10
    of the formula computed in float64.
    """
    for kind in ("conv", "linear"):
        for bias in (True, False):
            original, bn, given = pair(kind, bias=bias, dtype=torch.float64)
            given += " in float64"
            weight = original.weight.detach().clone()
            b = original.bias.detach().clone() if bias else torch.zeros_like(bn.running_mean)
            scale = bn.weight.detach() / (bn.running_var + bn.eps).sqrt()
            want_w = weight * scale.reshape(-1, *[1] * (weight.dim() - 1))
            want_b = (b - bn.running_mean) * scale + bn.bias.detach()
            fused = fuse(kata, original, bn, given=given)
            for name, want in (("weight", want_w), ("bias", want_b)):
                expect_close(
                    tensor_of(fused, name, given=given),
                    want,
                    given=given,
                    what=f"the fused {name}",
                    rtol=1e-10,
                    atol=1e-12,
                )


@pytest.mark.parity
def test_follows_device(kata, device):
    """runs on CUDA: the fused module is on the modules' device, nothing made on the CPU on the way

    The fused module lives where the modules it replaces live, and every tensor the fold makes
    (zeros for a missing bias, ones for a missing weight) is made there too: one made on the
    CPU cannot meet the GPU's tensors.

    Make new tensors from the modules' own (zeros_like of the running mean), or with their
    device; a module built anew starts on the CPU until moved.
    """
    # Without a bias, and for the conv without affine: the stand-ins the fold makes. (torch's
    # Linear fold raises on a BatchNorm1d without affine: test_affine_false.)
    for kind, affine in (("conv", False), ("linear", True)):
        original, bn, given = pair(kind, bias=False, affine=affine)
        name = FUSE[type(original)]
        expect_built_on_device(
            lambda original, bn, name=name: getattr(kata, name)(original, bn),
            original,
            bn,
            device=device,
            given=given,
        )


def make_conv(c_in, c_out, k, *, bias=True, dtype=torch.float32, **options):
    """A Conv2d in eval mode with weights of magnitude 0.5 to 1.5 (none zero, so that the
    fused weight divided by it reads the scale) and a random bias; and its call, as messages
    show it."""
    conv = nn.Conv2d(c_in, c_out, k, bias=bias, **options).to(dtype)
    with torch.no_grad():
        conv.weight.copy_(nonzero_values(*conv.weight.shape, device="cpu", dtype=dtype))
        if bias:
            conv.bias.normal_()
    kwargs = {**options, **({} if bias else {"bias": False})}
    return conv.eval(), describe_call("Conv2d", c_in, c_out, k, **kwargs)


def make_linear(n_in, n_out, *, bias=True, dtype=torch.float32):
    """A Linear in eval mode, its weight of magnitude 0.5 to 1.5, and its call."""
    linear = nn.Linear(n_in, n_out, bias=bias).to(dtype)
    with torch.no_grad():
        linear.weight.copy_(nonzero_values(n_out, n_in, device="cpu", dtype=dtype))
        if bias:
            linear.bias.normal_()
    return linear.eval(), describe_call("Linear", n_in, n_out, **({} if bias else {"bias": False}))


def make_bn(cls, c, *, eps=1e-5, affine=True, var=(0.5, 3.0), dtype=torch.float32):
    """A BatchNorm in eval mode after some training: running mean about 0 ± 2, running variance
    in `var`, weight of magnitude 0.5 to 1.5 and a random bias; and its call."""
    bn = cls(c, eps=eps, affine=affine).to(dtype)
    with torch.no_grad():
        bn.running_mean.normal_().mul_(2)
        bn.running_var.uniform_(*var)
        bn.num_batches_tracked.fill_(5)
        if affine:
            bn.weight.copy_(nonzero_values(c, device="cpu", dtype=dtype))
            bn.bias.normal_()
    kwargs = {**({} if eps == 1e-5 else {"eps": eps}), **({} if affine else {"affine": False})}
    return bn.eval(), describe_call(cls.__name__, c, **kwargs)


def pair(kind="conv", case=0, *, bias=True, dtype=torch.float32, **bn_options):
    """(original, bn, the fold as messages show it): the conv of CONVS[case], a Linear(5, 5)
    (kind "linear") or a Linear(3, 5) (kind "wide"), and a BatchNorm of its output channels.

    The checks of other properties fold a Linear with as many inputs as outputs: a scale along
    the inputs (test_scale_along_output_channels's mistake) fits its weight, where a Linear(3, 5)
    would raise in every check."""
    if kind == "conv":
        c_in, c_out, k, options = CONVS[case]
        original, said = make_conv(c_in, c_out, k, bias=bias, dtype=dtype, **options)
        bn, bn_said = make_bn(nn.BatchNorm2d, c_out, dtype=dtype, **bn_options)
    else:
        n_in = 3 if kind == "wide" else 5
        original, said = make_linear(n_in, 5, bias=bias, dtype=dtype)
        bn, bn_said = make_bn(nn.BatchNorm1d, 5, dtype=dtype, **bn_options)
    return original, bn, f"{FUSE[type(original)]}({said}, {bn_said})"


def not_a_layer(fused, original):
    """Why fused is not a module of original's class, or None."""
    cls = type(original)
    if fused is None:
        return "it returned None. Did you forget `return`?"
    if isinstance(fused, tuple | list):
        return (
            f"it returned a {type(fused).__name__}, where an nn.{cls.__name__} is expected: "
            f"put the fused weight and bias into a copy of the {cls.__name__.lower()} and "
            "return that module."
        )
    if not isinstance(fused, cls):
        return (
            f"it returned a {type(fused).__name__}, where an nn.{cls.__name__} is expected: "
            "the fold puts the BatchNorm into the layer's own weight and bias, one layer that "
            "runs alone."
        )
    return None


def fuse(kata, original, bn, *, given):
    """The learner's fold of bn into original, a module of original's class (else
    test_returns_layer_like_the_original's mistake, met here first). Its settings (stride,
    groups) are that check's alone: the checks that read the fused weight and bias are blind
    to them."""
    fused = getattr(kata, FUSE[type(original)])(original, bn)
    if (problem := not_a_layer(fused, original)) is not None:
        fail_for("test_returns_layer_like_the_original", f"{given}: {problem}")
    weight = getattr(fused, "weight", None)
    if isinstance(weight, torch.Tensor) and weight.shape != original.weight.shape:
        fail_for(  # a scale that broadcast the weight to another shape: not this check's
            "test_scale_along_output_channels",
            f"{given}: the fused weight has shape {tuple(weight.shape)}, the original's "
            f"{tuple(original.weight.shape)}.",
        )
    return fused


def tensor_of(fused, name, *, given):
    """fused.<name> as a tensor (the fused weight or bias), failing clearly where it is not."""
    value = getattr(fused, name, None)
    if not isinstance(value, torch.Tensor):
        fail(f"{given}: the fused module's {name} is {type(value).__name__}, not a tensor.")
    return value.detach()


def scale_of(fused, weight, *, given):
    """The scale per output channel that the fold applied, read off the fused weight divided
    by the original's (float64), where it is one scale per output channel (else
    test_scale_along_output_channels's mistake)."""
    got = tensor_of(fused, "weight", given=given)
    if got.shape != weight.shape:
        fail_for(
            "test_scale_along_output_channels",
            f"{given}: the fused weight has shape {tuple(got.shape)}, the original's "
            f"{tuple(weight.shape)}.",
        )
    ratio = (got.double() / weight.double()).reshape(weight.shape[0], -1)
    if not values_close(ratio, ratio[:, :1].expand_as(ratio)):
        fail_for(
            "test_scale_along_output_channels",
            f"{given}: the fused weight is not the original scaled once per output channel.",
        )
    return ratio.mean(1)


def input_for(original, *, batch=2, dtype=torch.float32):
    """A random input of original's input shape: (batch, C_in, 7, 7) for a conv."""
    if isinstance(original, nn.Conv2d):
        return torch.randn(batch, original.in_channels, 7, 7, dtype=dtype)
    return torch.randn(batch, original.in_features, dtype=dtype)


def eval_output(original, bn, x):
    """bn(original(x)) in eval mode, computed in float64 on copies: what the fold must give."""
    first, second = copy.deepcopy(original).double(), copy.deepcopy(bn).double()
    with torch.no_grad():
        return second(first(x.double()))


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your fused conv against the conv followed by the BatchNorm."""
    channels, size = (128, 56) if device.type == "cuda" else (64, 28)
    conv = nn.Conv2d(channels, channels, 3, padding=1).to(device).eval()
    bn = nn.BatchNorm2d(channels).to(device).eval()
    fused = kata.fuse_conv_bn_eval(conv, bn)
    x = torch.randn(8, channels, size, size, device=device)
    return PerfCase(
        given=f"fuse_conv_bn_eval(Conv2d({channels}, {channels}, 3), ...) on x {shape_of(x)}",
        mine=lambda: fused(x),
        builtin=lambda: bn(conv(x)),
        builtin_name="the conv, then the BatchNorm",
        bytes_moved=2 * x.nbytes,
    )
