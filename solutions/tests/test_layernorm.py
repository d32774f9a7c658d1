"""Reference tests of LayerNorm: a specification of the kata's layer, property by property.

Each test takes the layer's module as `kata` and checks one property of `kata.LayerNorm`
against torch.nn.LayerNorm or the formula written out in float64: the parameters and the
state_dict, the output's shape and dtype, the statistics (per sample, biased variance, eps
inside the root, over every normalized dim), the options, numerical stability, gradients, then
torch parity (float64 kept in float64, half precision, bias=False, the shape error,
non-contiguous and empty inputs).
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn


def randomised(kata, *args, **kwargs):
    """Your LayerNorm and nn.LayerNorm built alike, both holding the same random weight and bias
    (the initial ones and zeros would hide a weight or bias used the wrong way)."""
    torch.manual_seed(0)
    ref = nn.LayerNorm(*args, **kwargs)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn_like(p))
    mine = kata.LayerNorm(*args, **kwargs)
    mine.load_state_dict(ref.state_dict())
    return mine, ref


def layer_norm_f64(x, dims, eps):
    """The formula in float64: (x - mean) / sqrt(biased var + eps) over `dims`."""
    x = x.double()
    mean = x.mean(dims, keepdim=True)
    var = (x - mean).square().mean(dims, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)


def test_parameters(kata):
    """weight (ones) and bias (zeros) are nn.Parameters of shape normalized_shape, as torch's."""
    for shape in (8, (3, 4), [3, 4]):
        mine, ref = kata.LayerNorm(shape), nn.LayerNorm(shape)
        got = {name: p for name, p in mine.named_parameters()}
        want = dict(ref.named_parameters())
        assert sorted(got) == sorted(want), f"LayerNorm({shape!r}) parameters: {sorted(got)}"
        for name, p in want.items():
            assert isinstance(got[name], nn.Parameter)
            assert got[name].requires_grad
            torch.testing.assert_close(got[name].detach(), p.detach(), rtol=0, atol=0)
        assert mine.normalized_shape == ref.normalized_shape  # a tuple, as torch's: not a list


def test_constructor_defaults(kata):
    """The defaults are torch's: eps=1e-5, elementwise_affine=True, bias=True; an int shape is
    kept as the tuple (n,)."""
    layer = kata.LayerNorm(8)
    assert layer.normalized_shape == (8,)
    assert layer.eps == 1e-5
    assert layer.weight is not None and layer.bias is not None
    # The default eps shows on a small variance, where 1e-5 is most of it.
    torch.manual_seed(0)
    x = torch.randn(4, 8, dtype=torch.float64) * 3e-3
    want = F.layer_norm(x, (8,), eps=1e-5)
    torch.testing.assert_close(layer.double()(x), want, rtol=1e-6, atol=1e-6)


def test_state_dict_round_trip(kata):
    """The state_dict has nn.LayerNorm's keys and shapes, and loads both ways (strict)."""
    mine, ref = randomised(kata, (3, 8))
    assert sorted(mine.state_dict()) == sorted(ref.state_dict())
    back = nn.LayerNorm((3, 8))
    back.load_state_dict(mine.state_dict())
    for name, value in ref.state_dict().items():
        torch.testing.assert_close(back.state_dict()[name], value, rtol=0, atol=0)


def test_output_like_input(kata):
    """The output has the input's shape and dtype, in float32 and float64."""
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        layer = kata.LayerNorm(8).to(dtype)
        x = torch.randn(3, 5, 8, dtype=dtype)
        y = layer(x)
        assert y.shape == x.shape
        assert y.dtype == dtype


def test_input_unmodified(kata):
    """forward leaves the caller's input as it was."""
    torch.manual_seed(0)
    x = torch.randn(4, 8) * 2 + 1
    before = x.clone()
    kata.LayerNorm(8)(x)
    torch.testing.assert_close(x, before, rtol=0, atol=0)


def test_matches_torch(kata):
    """forward matches nn.LayerNorm, with a random weight and bias, on several shapes and eps,
    a sample without batch dims included."""
    cases = [((8,), (4, 8)), ((8,), (2, 3, 8)), ((16,), (2, 7, 16)), ((8,), (8,))]
    for dtype in (torch.float32, torch.float64):
        for eps in (1e-5, 0.1):
            for shape, x_shape in cases:
                mine, ref = randomised(kata, shape, eps=eps)
                mine, ref = mine.to(dtype), ref.to(dtype)
                x = torch.randn(x_shape, dtype=dtype) * 3 + 1
                want = ref(x).detach()
                torch.testing.assert_close(mine(x), want, rtol=1e-4, atol=1e-5)


def test_statistics_per_sample(kata):
    """A sample's output depends on that sample alone, not on the rest of the batch."""
    torch.manual_seed(0)
    layer = kata.LayerNorm(8).double()
    x = torch.randn(4, 8, dtype=torch.float64) * 2 + 1
    alone = layer(x[:1].clone())
    others = x.clone()
    others[1:] = others[1:] * 10 + 5
    torch.testing.assert_close(layer(others)[:1], alone, rtol=1e-6, atol=1e-6)


def test_same_in_eval_mode(kata):
    """No statistics are kept between calls: eval mode gives what training mode gives."""
    torch.manual_seed(0)
    layer = kata.LayerNorm(8).double()
    layer(torch.randn(4, 8, dtype=torch.float64))  # a training call first
    x = torch.randn(4, 8, dtype=torch.float64) * 3 + 2
    in_eval = layer.eval()(x.clone())
    torch.testing.assert_close(in_eval, layer.train()(x.clone()), rtol=1e-6, atol=1e-6)


def test_constant_input(kata):
    """A constant row has zero variance: the output is the bias, finite, not NaN."""
    mine, ref = randomised(kata, 8)
    x = torch.full((3, 8), 2.5)
    torch.testing.assert_close(mine(x), ref(x).detach(), rtol=1e-5, atol=1e-5)


def test_biased_variance(kata):
    """The variance divides by N, not N - 1."""
    x = torch.tensor([[1.0, 2.0, 4.0, 7.0]], dtype=torch.float64)
    layer = kata.LayerNorm(4, eps=0.0, elementwise_affine=False).double()
    torch.testing.assert_close(layer(x), layer_norm_f64(x, (-1,), 0.0), rtol=1e-6, atol=1e-6)


def test_eps_inside_sqrt(kata):
    """eps is added to the variance inside the square root, and used as given, 0.0 too."""
    torch.manual_seed(0)
    for eps, scale in ((0.05, 0.1), (1e-3, 0.03), (0.0, 1e-3)):
        layer = kata.LayerNorm(8, eps=eps, elementwise_affine=False).double()
        x = torch.randn(4, 8, dtype=torch.float64) * scale
        want = layer_norm_f64(x, (-1,), eps)
        torch.testing.assert_close(layer(x), want, rtol=1e-6, atol=1e-6)


def test_multidim_normalized_shape(kata):
    """A normalized_shape of several dims normalizes over all of them together."""
    for shape in ((4, 5), (3, 4, 5)):
        mine, ref = randomised(kata, shape)
        torch.manual_seed(1)
        x = torch.randn(2, 3, 4, 5) * 2 + torch.arange(5.0)
        torch.testing.assert_close(mine(x), ref(x).detach(), rtol=1e-4, atol=1e-5)


def test_no_elementwise_affine(kata):
    """elementwise_affine=False: no parameters, weight and bias None, the output x̂ itself."""
    layer = kata.LayerNorm(8, elementwise_affine=False)
    assert list(layer.parameters()) == []
    assert layer.weight is None and layer.bias is None
    assert len(layer.state_dict()) == 0
    torch.manual_seed(0)
    x = torch.randn(4, 8) * 2 + 1
    want = F.layer_norm(x, (8,))
    torch.testing.assert_close(layer(x), want, rtol=1e-4, atol=1e-5)


def test_numerically_stable(kata):
    """float32 inputs with a large mean (1000 + randn) are normalized accurately."""
    torch.manual_seed(0)
    x = 1000 + torch.randn(16, 64)
    layer = kata.LayerNorm(64, elementwise_affine=False)
    want = layer_norm_f64(x, (-1,), 1e-5).float()
    torch.testing.assert_close(layer(x), want, rtol=0, atol=2e-3)


def test_state_is_registered(kata):
    """Every tensor the layer keeps is a parameter or a buffer, so .to(float64) converts it."""
    layer = kata.LayerNorm(8).to(torch.float64)
    for name, value in vars(layer).items():
        assert not isinstance(value, torch.Tensor), f"{name} is a tensor .to() does not move"
    for name, t in [*layer.named_parameters(), *layer.named_buffers()]:
        assert t.dtype == torch.float64, name


def test_gradients_match_torch(kata):
    """Gradients for the input, weight and bias match nn.LayerNorm's, in float64."""
    mine, ref = randomised(kata, (3, 8))
    mine, ref = mine.double(), ref.double()
    torch.manual_seed(1)
    x = torch.randn(5, 3, 8, dtype=torch.float64) * 2 + 1
    g = torch.randn_like(x)
    grads = []
    for layer in (mine, ref):
        xi = x.clone().requires_grad_()
        layer(xi).backward(g)
        grads.append([xi.grad, layer.weight.grad, layer.bias.grad])
    for got, want in zip(*grads, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-8)


def test_float64_computed_in_float64(kata):
    """A float64 input is computed in float64, to float64's accuracy (torch parity)."""
    mine, ref = randomised(kata, 8)
    mine, ref = mine.double(), ref.double()
    torch.manual_seed(1)
    x = torch.randn(4, 8, dtype=torch.float64) * 2 + 1
    torch.testing.assert_close(mine(x), ref(x).detach(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(kata, dtype):
    """Half inputs: statistics in float32, the result in the input's dtype (torch parity)."""
    mine, ref = randomised(kata, 64)
    mine = mine.to(dtype)
    torch.manual_seed(1)
    x = torch.randn(8, 64).to(dtype)
    y = mine(x)
    assert y.dtype == dtype
    want = ref(x.float()).detach()
    torch.testing.assert_close(y.float(), want, rtol=2e-2, atol=2e-2)
    # Far from zero, statistics rounded to half precision are off by a good part of the spread.
    offset = {torch.float16: 384.0, torch.bfloat16: 48.0}[dtype]
    x = (offset + torch.randn(8, 64)).to(dtype)
    want = layer_norm_f64(x, (-1,), 1e-5).to(dtype)
    tol = 2 * torch.finfo(dtype).eps
    torch.testing.assert_close(kata.LayerNorm(64).to(dtype)(x), want, rtol=tol, atol=tol)


def test_no_bias(kata):
    """bias=False: a weight, no bias (None), and torch's output (torch parity)."""
    mine, ref = randomised(kata, 8, bias=False)
    assert mine.bias is None
    assert [name for name, _ in mine.named_parameters()] == ["weight"]
    torch.manual_seed(1)
    x = torch.randn(4, 8) * 2 + 1
    torch.testing.assert_close(mine(x), ref(x).detach(), rtol=1e-4, atol=1e-5)


def test_wrong_trailing_shape_raises(kata):
    """Trailing dims other than normalized_shape raise RuntimeError or ValueError."""
    layer = kata.LayerNorm((3, 4), elementwise_affine=False)
    for shape in ((2, 5, 4), (4,), (2, 4, 3)):
        with pytest.raises((RuntimeError, ValueError)):
            layer(torch.randn(shape))


def test_noncontiguous_input(kata):
    """A transposed (non-contiguous) input is normalized like its contiguous copy."""
    torch.manual_seed(0)
    for shape, made, dims in (((4, 5), (2, 3, 5, 4), (-1, -2)), ((8,), (2, 8, 5), (1, 2))):
        mine, ref = randomised(kata, shape)
        x = torch.randn(made).transpose(*dims)
        torch.testing.assert_close(mine(x), ref(x.contiguous()).detach(), rtol=1e-4, atol=1e-5)


def test_empty_batch(kata):
    """An empty batch (a leading dim of size 0) gives an empty output of the same shape."""
    for shape, x_shape in (((8,), (0, 8)), ((3, 4), (2, 0, 3, 4))):
        x = torch.randn(x_shape)
        assert kata.LayerNorm(shape)(x).shape == x.shape
