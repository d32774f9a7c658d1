"""Reference tests of RMSNorm: a specification of the kata's layer, property by property.

Each test takes the layer's module as `kata` and checks one property of `kata.RMSNorm` against
torch.nn.RMSNorm or the formula x / sqrt(mean(x²) + eps) · weight written out in float64: the
parameter and the state_dict, the output's shape and dtype, the statistic (per sample, the
mean of the squares, no centring, eps inside the root, over every normalized dim), the options,
gradients, then torch parity (float64 kept in float64, half precision computed in float32, the
eps=None default, the shape error and an empty batch).
"""

import pytest
import torch
from torch import nn

HALF = (torch.float16, torch.bfloat16)


def randomised(kata, *args, **kwargs):
    """Your RMSNorm and nn.RMSNorm built alike, both holding the same random weight (the
    initial ones would hide a weight used the wrong way)."""
    torch.manual_seed(0)
    ref = nn.RMSNorm(*args, **kwargs)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn_like(p))
    mine = kata.RMSNorm(*args, **kwargs)
    mine.load_state_dict(ref.state_dict())
    return mine, ref


def rms_norm_f64(x, dims=(-1,), eps=0.0, weight=None):
    """The formula in float64: x / sqrt(mean(x², dims) + eps), times weight if given."""
    x = x.double()
    y = x / torch.sqrt(x.square().mean(dims, keepdim=True) + eps)
    return y if weight is None else y * weight.detach().double()


def default_eps(dtype):
    """eps=None means the machine epsilon of the dtype the layer computes in: float64 for
    float64 inputs, float32 for every other one (half inputs are upcast)."""
    return torch.finfo(torch.float64 if dtype == torch.float64 else torch.float32).eps


def test_parameters(kata):
    """weight is an nn.Parameter of ones of shape normalized_shape, named as torch's."""
    for shape in (8, (3, 4), [3, 4]):
        mine, ref = kata.RMSNorm(shape), nn.RMSNorm(shape)
        got = dict(mine.named_parameters())
        assert sorted(got) == ["weight"], f"RMSNorm({shape!r}) parameters: {sorted(got)}"
        assert isinstance(got["weight"], nn.Parameter) and got["weight"].requires_grad
        torch.testing.assert_close(got["weight"].detach(), ref.weight.detach(), rtol=0, atol=0)
        assert mine.normalized_shape == ref.normalized_shape
        assert isinstance(mine.normalized_shape, tuple)


def test_constructor_arguments_kept(kata):
    """eps (None by default) and elementwise_affine are kept as given, as torch keeps them."""
    assert kata.RMSNorm(8).eps is None
    assert kata.RMSNorm(8).elementwise_affine is True
    layer = kata.RMSNorm(8, eps=1e-3, elementwise_affine=False)
    assert layer.eps == 1e-3
    assert layer.elementwise_affine is False


def test_state_dict_round_trip(kata):
    """The state_dict has nn.RMSNorm's keys and shapes, and loads both ways (strict)."""
    mine, ref = randomised(kata, (3, 8))
    assert sorted(mine.state_dict()) == sorted(ref.state_dict())
    back = nn.RMSNorm((3, 8))
    back.load_state_dict(mine.state_dict())
    torch.testing.assert_close(back.weight, ref.weight, rtol=0, atol=0)


def test_output_like_input(kata):
    """The output has the input's shape and dtype, in float32 and float64."""
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        x = torch.randn(3, 5, 8, dtype=dtype)
        y = kata.RMSNorm(8).to(dtype)(x)
        assert y.shape == x.shape
        assert y.dtype == dtype


def test_input_unmodified(kata):
    """forward leaves the caller's input as it was."""
    torch.manual_seed(0)
    x = torch.randn(4, 8) * 2 + 1
    before = x.clone()
    kata.RMSNorm(8, eps=1e-6)(x)
    torch.testing.assert_close(x, before, rtol=0, atol=0)


def test_matches_torch(kata):
    """forward matches nn.RMSNorm, with a random weight, on several shapes and eps, a sample
    without batch dims included."""
    cases = [((8,), (4, 8)), ((8,), (2, 3, 8)), ((16,), (2, 7, 16)), ((5,), (5,))]
    for dtype in (torch.float32, torch.float64):
        for eps in (1e-5, 1e-3):
            for shape, x_shape in cases:
                mine, ref = randomised(kata, shape, eps=eps)
                mine, ref = mine.to(dtype), ref.to(dtype)
                x = torch.randn(x_shape, dtype=dtype) * 3 + 1
                want = ref(x).detach()
                torch.testing.assert_close(mine(x), want, rtol=1e-4, atol=1e-5)


def test_statistics_per_sample(kata):
    """A sample's output depends on that sample alone, not on the rest of the batch."""
    torch.manual_seed(0)
    layer = kata.RMSNorm(8, eps=1e-6).double()
    x = torch.randn(4, 8, dtype=torch.float64) * 2 + 1
    alone = layer(x[:1].clone())
    others = x.clone()
    others[1:] = others[1:] * 10 + 5
    torch.testing.assert_close(layer(others)[:1], alone, rtol=1e-6, atol=1e-6)


def test_same_in_eval_mode(kata):
    """No statistics are kept between calls: eval mode gives what training mode gives."""
    torch.manual_seed(0)
    layer = kata.RMSNorm(8, eps=1e-6).double()
    layer(torch.randn(4, 8, dtype=torch.float64))  # a training call first
    x = torch.randn(4, 8, dtype=torch.float64) * 3 + 2
    in_eval = layer.eval()(x.clone())
    torch.testing.assert_close(in_eval, layer.train()(x.clone()), rtol=1e-6, atol=1e-6)


def test_zero_input(kata):
    """An all-zero input gives zeros, not NaN, with eps given or the default."""
    for kwargs in ({}, {"eps": 1e-6}):
        y = kata.RMSNorm(8, **kwargs)(torch.zeros(3, 8))
        torch.testing.assert_close(y, torch.zeros(3, 8), rtol=0, atol=0)


def test_root_mean_square(kata):
    """x is divided by the root of the mean of its squares: divide the sum by n, not by 1 or
    n - 1."""
    x = torch.tensor([[1.0, -1.0, 2.0, -2.0], [3.0, 0.5, -3.0, -0.5]], dtype=torch.float64)
    layer = kata.RMSNorm(4, eps=0.0, elementwise_affine=False).double()
    torch.testing.assert_close(layer(x), rms_norm_f64(x), rtol=1e-6, atol=1e-6)


def test_no_mean_centring(kata):
    """No mean is subtracted: an input far from zero keeps its sign, x / rms, not x / std."""
    torch.manual_seed(0)
    spread = torch.tensor([[0.5], [1.0], [2.0], [3.0]], dtype=torch.float64)
    x = 5 + torch.randn(4, 16, dtype=torch.float64) * spread
    layer = kata.RMSNorm(16, eps=0.0, elementwise_affine=False).double()
    torch.testing.assert_close(layer(x), rms_norm_f64(x), rtol=1e-6, atol=1e-6)


def test_eps_inside_sqrt(kata):
    """eps is added to the mean square, inside the square root."""
    torch.manual_seed(0)
    for eps, scale in ((0.05, 0.1), (1e-3, 0.03)):
        layer = kata.RMSNorm(8, eps=eps, elementwise_affine=False).double()
        x = torch.randn(4, 8, dtype=torch.float64) * scale
        torch.testing.assert_close(layer(x), rms_norm_f64(x, eps=eps), rtol=1e-6, atol=1e-6)


def test_weight_scales_each_element(kata):
    """The weight itself multiplies each normalized element: x / rms · weight."""
    mine, ref = randomised(kata, 8, eps=1e-6)
    mine = mine.double()
    torch.manual_seed(1)
    x = torch.randn(4, 8, dtype=torch.float64)
    want = rms_norm_f64(x, eps=1e-6, weight=ref.weight)
    torch.testing.assert_close(mine(x), want, rtol=1e-6, atol=1e-6)


def test_multidim_normalized_shape(kata):
    """A normalized_shape of several dims is normalized over all of them together."""
    for shape in ((4, 5), (3, 4, 5)):
        mine, ref = randomised(kata, shape, eps=1e-6)
        torch.manual_seed(1)
        x = torch.randn(2, 3, 4, 5) * torch.arange(1.0, 5.0).unsqueeze(-1)
        torch.testing.assert_close(mine(x), ref(x).detach(), rtol=1e-4, atol=1e-5)


def test_no_elementwise_affine(kata):
    """elementwise_affine=False: no parameters, weight None, the output x / rms itself."""
    layer = kata.RMSNorm(8, eps=1e-6, elementwise_affine=False)
    assert list(layer.parameters()) == []
    assert layer.weight is None
    assert len(layer.state_dict()) == 0
    torch.manual_seed(0)
    x = torch.randn(4, 8) * 2 + 1
    torch.testing.assert_close(layer(x), rms_norm_f64(x, eps=1e-6).float(), rtol=1e-4, atol=1e-5)


def test_state_is_registered(kata):
    """Every tensor the layer keeps is a parameter or a buffer, so .to(float64) converts it."""
    for kwargs in ({}, {"eps": 1e-6}):
        layer = kata.RMSNorm(8, **kwargs).to(torch.float64)
        for name, value in vars(layer).items():
            assert not isinstance(value, torch.Tensor), f"{name} is a tensor .to() does not move"
        for name, t in [*layer.named_parameters(), *layer.named_buffers()]:
            assert t.dtype == torch.float64, name


def test_gradients_match_torch(kata):
    """Gradients for the input and the weight match nn.RMSNorm's, in float64."""
    mine, ref = randomised(kata, (3, 8), eps=1e-5)
    mine, ref = mine.double(), ref.double()
    torch.manual_seed(1)
    x = torch.randn(5, 3, 8, dtype=torch.float64) * 2 + 1
    g = torch.randn_like(x)
    grads = []
    for layer in (mine, ref):
        xi = x.clone().requires_grad_()
        layer(xi).backward(g)
        grads.append([xi.grad, layer.weight.grad])
    for got, want in zip(*grads, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-8)


def test_float64_computed_in_float64(kata):
    """A float64 input is computed in float64, to float64's accuracy (torch parity)."""
    mine, ref = randomised(kata, 8, eps=1e-6)
    mine = mine.double()
    torch.manual_seed(1)
    x = torch.randn(4, 8, dtype=torch.float64)
    want = rms_norm_f64(x, eps=1e-6, weight=ref.weight)
    torch.testing.assert_close(mine(x), want, rtol=1e-12, atol=1e-12)


def test_half_large_values(kata):
    """A float16 input of magnitude ~300 does not overflow: 300² is past float16's 65504
    (torch parity)."""
    torch.manual_seed(0)
    x = (torch.randn(8, 64) * 300).to(torch.float16)
    y = kata.RMSNorm(64, eps=1e-6).to(torch.float16)(x)
    want = rms_norm_f64(x, eps=1e-6).to(torch.float16)
    torch.testing.assert_close(y.to(torch.float16), want, rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", HALF)
def test_half_precision(kata, dtype):
    """float16 and bfloat16 inputs are computed in float32 and returned in their own dtype
    (torch parity)."""
    mine, ref = randomised(kata, 64)
    mine = mine.to(dtype)
    torch.manual_seed(1)
    x = (torch.randn(8, 64) * 2).to(dtype)
    y = mine(x)
    assert y.dtype == dtype
    want = rms_norm_f64(x, eps=default_eps(dtype), weight=ref.weight.to(dtype)).to(dtype)
    rtol = 2e-3 if dtype == torch.float16 else 1.6e-2
    torch.testing.assert_close(y, want, rtol=rtol, atol=1e-5)
    # With the weight at ones, float32 arithmetic rounded once to x's dtype is the exact result
    # rounded once, but for a rare element; half-precision arithmetic misses many of them.
    y = kata.RMSNorm(64, eps=1e-6).to(dtype)(x)
    want = rms_norm_f64(x, eps=1e-6).to(dtype)
    assert (y != want).double().mean().item() <= 0.02


@pytest.mark.parametrize(
    ("dtype", "scale"),
    [(torch.float32, 1e-4), (torch.float64, 1e-8), (torch.float16, 1e-4), (torch.bfloat16, 1e-4)],
)
def test_eps_default(kata, dtype, scale):
    """eps=None is the machine epsilon of the computation dtype: float32's for half and
    float32 inputs, float64's for float64 inputs (torch parity)."""
    torch.manual_seed(0)
    x = (torch.randn(4, 16, dtype=torch.float64) * scale).to(dtype)
    y = kata.RMSNorm(16).to(dtype)(x)
    want = rms_norm_f64(x, eps=default_eps(dtype)).to(dtype)
    rtol = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2}.get(dtype, 1e-4)
    torch.testing.assert_close(y, want, rtol=rtol, atol=0)


def test_wrong_trailing_shape_raises(kata):
    """Trailing dims other than normalized_shape raise RuntimeError or ValueError."""
    layer = kata.RMSNorm((3, 4), elementwise_affine=False)
    for shape in ((2, 5, 4), (4,), (2, 4, 3)):
        with pytest.raises((RuntimeError, ValueError)):
            layer(torch.randn(shape))


def test_empty_batch(kata):
    """An empty batch (a leading dim of size 0) gives an empty output of the same shape."""
    for shape, x_shape in (((8,), (0, 8)), ((3, 4), (2, 0, 3, 4))):
        x = torch.randn(x_shape)
        assert kata.RMSNorm(shape, eps=1e-6)(x).shape == x.shape
