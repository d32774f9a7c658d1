"""The reference tests of the BatchNorm fold: fuse_conv_bn_eval and fuse_linear_bn_eval.

Each test states one property of the fold, as torch.nn.utils.fusion has it: the fused layer's
output is bn(layer(x)) in eval mode, for convs of every kind and for Linears, through a plain
layer of the original's class and settings; the scale runs along the output channels, ε sits
inside the root and the running mean goes into the bias; a missing layer bias and a BatchNorm2d
without affine fold too; the originals stay as they were and share no memory with the result.
Then torch's manners: training mode raises, the new weight and bias are Parameters with the
original's requires_grad, the result is in eval mode, and float64 folds in float64.

The modules are small and built in eval mode with running statistics, weights and biases far
from their first values, so that a fold that ignores one of them shows it. Values are compared
in float64, where the fold is exact to many more digits than the tolerances ask.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

# (in_channels, out_channels, kernel_size, options): a plain conv, a strided, dilated and
# grouped one, a depthwise one (groups = in_channels), a 1x1 one and one padded by reflection.
CONVS = [
    (4, 6, 3, {"padding": 1}),
    (4, 6, 3, {"stride": 2, "dilation": 2, "groups": 2, "padding": 2}),
    (4, 4, 3, {"padding": 1, "groups": 4}),
    (4, 4, 1, {}),
    (4, 6, 3, {"padding": 1, "padding_mode": "reflect"}),
]
TOL = {"rtol": 1e-9, "atol": 1e-9}


def trained_bn(cls, channels, *, eps=1e-5, affine=True, dtype=torch.float64):
    """A BatchNorm in eval mode as training leaves it: running statistics, weight and bias
    far from their first values."""
    bn = cls(channels, eps=eps, affine=affine).to(dtype)
    with torch.no_grad():
        bn.running_mean.normal_().mul_(2)
        bn.running_var.uniform_(0.3, 3.0)
        if affine:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_()
    return bn.eval()


def conv_and_bn(case=0, *, bias=True, dtype=torch.float64, **bn_options):
    """An eval-mode Conv2d of CONVS[case] with a random bias, and its BatchNorm2d."""
    c_in, c_out, k, options = CONVS[case]
    conv = nn.Conv2d(c_in, c_out, k, bias=bias, **options).to(dtype).eval()
    if bias:
        with torch.no_grad():
            conv.bias.normal_()
    return conv, trained_bn(nn.BatchNorm2d, c_out, dtype=dtype, **bn_options)


def linear_and_bn(n_in=3, n_out=5, *, bias=True, dtype=torch.float64, **bn_options):
    """An eval-mode Linear with a random bias, and its BatchNorm1d."""
    linear = nn.Linear(n_in, n_out, bias=bias).to(dtype).eval()
    if bias:
        with torch.no_grad():
            linear.bias.normal_()
    return linear, trained_bn(nn.BatchNorm1d, n_out, dtype=dtype, **bn_options)


def both(**options):
    """A conv and a Linear, each with its BatchNorm."""
    return [conv_and_bn(**options), linear_and_bn(**options)]


def fold(kata, layer, bn):
    """The learner's fold of bn into layer, the conv's or the Linear's."""
    if isinstance(layer, nn.Conv2d):
        return kata.fuse_conv_bn_eval(layer, bn)
    return kata.fuse_linear_bn_eval(layer, bn)


def input_for(layer, batch=2):
    """A random float64 input for layer: (batch, C_in, 7, 7) for a conv."""
    if isinstance(layer, nn.Conv2d):
        return torch.randn(batch, layer.in_channels, 7, 7, dtype=torch.float64)
    return torch.randn(batch, layer.in_features, dtype=torch.float64)


def expected(layer, bn, x):
    """bn(layer(x)) in eval mode, run on copies."""
    with torch.no_grad():
        return copy.deepcopy(bn)(copy.deepcopy(layer)(x))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", range(len(CONVS)))
def test_conv_output_is_bn_of_conv(kata, case, bias):
    """The fused conv gives bn(conv(x)) in eval mode: plain, strided and grouped, depthwise
    and 1x1 convs, with and without a bias."""
    torch.manual_seed(case)
    conv, bn = conv_and_bn(case, bias=bias)
    x = input_for(conv)
    with torch.no_grad():
        got = kata.fuse_conv_bn_eval(conv, bn)(x)
    torch.testing.assert_close(got, expected(conv, bn, x), **TOL)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("n_in", [3, 5, 8])
def test_linear_output_is_bn_of_linear(kata, n_in, bias):
    """The fused Linear gives bn(linear(x)) in eval mode, with fewer, as many or more inputs
    than outputs, with and without a bias."""
    torch.manual_seed(n_in)
    linear, bn = linear_and_bn(n_in, 5, bias=bias)
    x = input_for(linear, batch=4)
    with torch.no_grad():
        got = kata.fuse_linear_bn_eval(linear, bn)(x)
    torch.testing.assert_close(got, expected(linear, bn, x), **TOL)


@pytest.mark.parametrize("case", [0, 2])
def test_batchnorm_without_affine(kata, case):
    """A BatchNorm2d with affine=False (weight and bias None) folds as γ = 1 and β = 0."""
    torch.manual_seed(10 + case)
    conv, bn = conv_and_bn(case, affine=False)
    x = input_for(conv)
    with torch.no_grad():
        got = kata.fuse_conv_bn_eval(conv, bn)(x)
    torch.testing.assert_close(got, expected(conv, bn, x), **TOL)


def test_eps_inside_the_root(kata):
    """ε is added to the running variance under the square root, √(σ² + ε): here a large ε
    and small variances, where its place shows."""
    torch.manual_seed(20)
    for layer, bn in both(eps=0.5):
        with torch.no_grad():
            bn.running_var.uniform_(0.05, 0.2)
        x = input_for(layer)
        with torch.no_grad():
            got = fold(kata, layer, bn)(x)
        torch.testing.assert_close(got, expected(layer, bn, x), **TOL)


def test_weight_scaled_per_output_channel(kata):
    """The fused weight is the original's scaled by γ / √(σ² + ε), one factor per output
    channel (dim 0 of the weight)."""
    torch.manual_seed(30)
    for layer, bn in (conv_and_bn(1), linear_and_bn(5, 5), linear_and_bn(3, 5)):
        scale = bn.weight.detach() / (bn.running_var + bn.eps).sqrt()
        want = layer.weight.detach() * scale.reshape(-1, *[1] * (layer.weight.dim() - 1))
        got = fold(kata, layer, bn).weight.detach()
        torch.testing.assert_close(got, want, **TOL)


def test_bias_takes_the_running_mean(kata):
    """The fused bias is (b − μ) · s + β, with b = 0 where the layer has no bias."""
    torch.manual_seed(40)
    for bias in (True, False):
        for layer, bn in both(bias=bias):
            scale = bn.weight.detach() / (bn.running_var + bn.eps).sqrt()
            b = layer.bias.detach() if bias else torch.zeros_like(bn.running_mean)
            want = (b - bn.running_mean) * scale + bn.bias.detach()
            fused = fold(kata, layer, bn)
            assert fused.bias is not None, "the fused layer needs a bias for the shift"
            torch.testing.assert_close(fused.bias.detach(), want, **TOL)


def test_each_sample_alone(kata):
    """The fold uses the running statistics: a sample's output does not depend on the other
    samples in its batch."""
    torch.manual_seed(50)
    for layer, bn in both():
        fused = fold(kata, layer, bn)
        x = input_for(layer, batch=4)
        others = x.clone()
        others[1:] = others[1:] * 10 + 5
        with torch.no_grad():
            alone, together = fused(x[:1]), fused(others)[:1]
        torch.testing.assert_close(together, alone, **TOL)


def test_same_class_and_settings(kata):
    """The fold returns a new module of the original's class, built with the same sizes,
    stride, padding, dilation, groups and padding mode."""
    torch.manual_seed(60)
    conv_settings = (
        "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
        "groups", "padding_mode",
    )  # fmt: skip
    for layer, bn in (conv_and_bn(1), conv_and_bn(2), conv_and_bn(4), linear_and_bn(3, 5)):
        fused = fold(kata, layer, bn)
        assert type(fused) is type(layer)
        assert fused is not layer
        names = conv_settings if isinstance(layer, nn.Conv2d) else ("in_features", "out_features")
        for name in names:
            assert getattr(fused, name) == getattr(layer, name), name


def test_a_plain_layer(kata):
    """The fused module computes with its own weight and bias alone: the convolution (x Wᵀ + b
    for a Linear), nothing after it."""
    torch.manual_seed(70)
    for layer, bn in (conv_and_bn(1), linear_and_bn(3, 5)):
        fused = fold(kata, layer, bn)
        x = input_for(layer)
        w, b = fused.weight.detach(), fused.bias.detach()
        if isinstance(layer, nn.Conv2d):
            want = F.conv2d(x, w, b, layer.stride, layer.padding, layer.dilation, layer.groups)
        else:
            want = F.linear(x, w, b)
        with torch.no_grad():
            got = fused(x)
        torch.testing.assert_close(got, want, **TOL)


def test_originals_untouched(kata):
    """The conv (Linear) and the BatchNorm keep their values, modes and requires_grad, and
    bn(layer(x)) is what it was."""
    torch.manual_seed(80)
    for bias in (True, False):
        for layer, bn in both(bias=bias):
            before = [copy.deepcopy(m.state_dict()) for m in (layer, bn)]
            grads = [p.requires_grad for p in (*layer.parameters(), *bn.parameters())]
            x = input_for(layer)
            want = expected(layer, bn, x)
            fold(kata, layer, bn)
            for module, saved in zip((layer, bn), before, strict=True):
                assert module.state_dict().keys() == saved.keys()
                for name, value in module.state_dict().items():
                    assert torch.equal(value, saved[name]), name
            assert not layer.training and not bn.training
            assert [p.requires_grad for p in (*layer.parameters(), *bn.parameters())] == grads
            torch.testing.assert_close(expected(layer, bn, x), want, rtol=0, atol=0)


def test_shares_no_memory(kata):
    """The fused module's tensors are its own: an optimizer step on it leaves the original
    layer as it was."""
    torch.manual_seed(90)
    for layer, bn in both():
        weight, bias = layer.weight.detach().clone(), layer.bias.detach().clone()
        fused = fold(kata, layer, bn)
        theirs = [*layer.parameters(), *bn.parameters(), *bn.buffers()]
        for t in fused.parameters():
            assert all(t is not other for other in theirs)
        with torch.no_grad():
            for t in fused.parameters():
                t.add_(1.0)
        torch.testing.assert_close(layer.weight.detach(), weight, rtol=0, atol=0)
        torch.testing.assert_close(layer.bias.detach(), bias, rtol=0, atol=0)


@pytest.mark.parametrize("which", ["layer", "bn"])
def test_training_mode_raises(kata, which):
    """A layer or a BatchNorm in training mode cannot be folded: it raises, as torch's
    "Fusion only for eval!" does (an AssertionError, ValueError or RuntimeError)."""
    torch.manual_seed(100)
    for layer, bn in both():
        (layer if which == "layer" else bn).train()
        with pytest.raises((AssertionError, ValueError, RuntimeError)):
            fold(kata, layer, bn)


@pytest.mark.parametrize("frozen", [False, True])
def test_parameters_keep_requires_grad(kata, frozen):
    """The fused weight and bias are registered Parameters whose requires_grad is the
    original's: a frozen layer folds into a frozen layer."""
    torch.manual_seed(110)
    for layer, bn in both():
        layer.requires_grad_(not frozen)
        fused = fold(kata, layer, bn)
        params = dict(fused.named_parameters())
        for name in ("weight", "bias"):
            value = getattr(fused, name)
            assert isinstance(value, nn.Parameter) and params.get(name) is value, name
            assert value.requires_grad == (not frozen), name
            assert value.is_leaf, name


def test_fused_in_eval_mode(kata):
    """The fused module is in eval mode, like the modules it was folded from."""
    torch.manual_seed(120)
    for layer, bn in both():
        assert not fold(kata, layer, bn).training


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_keeps_dtype(kata, dtype):
    """A float32 pair folds into a float32 layer, a float64 pair into a float64 layer whose
    weight and bias are the fold's to float64's precision."""
    torch.manual_seed(130)
    for layer, bn in both(dtype=dtype):
        fused = fold(kata, layer, bn)
        assert fused.weight.dtype == dtype and fused.bias.dtype == dtype
        if dtype == torch.float64:
            x = input_for(layer)
            with torch.no_grad():
                got = fused(x)
            torch.testing.assert_close(got, expected(layer, bn, x), rtol=1e-12, atol=1e-12)
