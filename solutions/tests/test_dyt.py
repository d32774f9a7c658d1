"""Reference tests of DyT: a specification of the kata's layer, property by property.

Each test takes the layer's module as `kata` and checks one property of
`kata.DyT(num_features, alpha_init_value=0.5, channels_last=True)` against the formula
weight · tanh(α · x) + bias written out in float64: the parameters and their initial values,
where α, weight and bias act, the channels-first layout, the output's shape and dtype, the
gradients (α's above all), then torch parity (α of shape (1,) as the official DynamicTanh's,
float64 kept in float64, half precision in its own dtype).
"""

import pytest
import torch


def place(layer, alpha, weight, bias):
    """Write α (in every element it has), weight and bias into the layer's parameters."""
    with torch.no_grad():
        layer.alpha.fill_(alpha)
        layer.weight.copy_(weight)
        layer.bias.copy_(bias)
    return layer


def random_affine(c, dtype=torch.float32):
    """A weight of magnitudes in [0.5, 1.5) with random signs, and a random bias: no zeros and
    no ones, so that a weight or bias used the wrong way shows."""
    magnitude = torch.rand(c, dtype=dtype) + 0.5
    sign = torch.where(torch.rand(c) < 0.5, -1.0, 1.0).to(dtype)
    return magnitude * sign, torch.randn(c, dtype=dtype)


def formula(x, alpha, weight, bias, channels_last=True):
    """weight · tanh(α · x) + bias in float64, the channels last or at dim 1."""
    shape = (-1,) if channels_last else (-1, 1, 1)
    w, b = (t.double().reshape(shape) for t in (weight, bias))
    return w * torch.tanh(alpha * x.double()) + b


def test_alpha_is_one_learnable_scalar(kata):
    """α is an nn.Parameter named alpha of one element, which requires grad."""
    layer = kata.DyT(8)
    params = dict(layer.named_parameters())
    assert "alpha" in params, f"parameters: {sorted(params)}"
    assert params["alpha"] is layer.alpha
    assert layer.alpha.numel() == 1
    assert layer.alpha.requires_grad


def test_parameters(kata):
    """The parameters are alpha, weight and bias; weight and bias of shape (num_features,)."""
    layer = kata.DyT(6)
    shapes = {name: tuple(p.shape) for name, p in layer.named_parameters()}
    assert sorted(shapes) == ["alpha", "bias", "weight"]
    assert shapes["weight"] == (6,) and shapes["bias"] == (6,)
    assert all(p.dtype == torch.float32 for p in layer.parameters())


def test_initial_values(kata):
    """α starts at alpha_init_value (0.5 by default), weight at ones and bias at zeros."""
    for kwargs, alpha0 in (({}, 0.5), ({"alpha_init_value": 2.0}, 2.0)):
        layer = kata.DyT(6, **kwargs)
        assert torch.all(layer.alpha.detach() == alpha0), f"{kwargs}: α = {layer.alpha}"
        torch.testing.assert_close(layer.weight.detach(), torch.ones(6), rtol=0, atol=0)
        torch.testing.assert_close(layer.bias.detach(), torch.zeros(6), rtol=0, atol=0)


def test_untrained_layer_is_tanh_of_half_x(kata):
    """As built, DyT(C) is tanh(x / 2), and DyT(C, alpha_init_value=a) is tanh(a · x)."""
    torch.manual_seed(0)
    x = torch.randn(4, 8) * 3
    torch.testing.assert_close(kata.DyT(8)(x), torch.tanh(0.5 * x), rtol=1e-5, atol=1e-6)
    layer = kata.DyT(8, alpha_init_value=0.2)
    torch.testing.assert_close(layer(x), torch.tanh(0.2 * x), rtol=1e-5, atol=1e-6)


def test_alpha_inside_tanh(kata):
    """α scales x inside the tanh: with α = 2, weight ones and bias zeros, y = tanh(2x)."""
    torch.manual_seed(0)
    layer = place(kata.DyT(8), 2.0, torch.ones(8), torch.zeros(8))
    x = torch.randn(4, 8) * 2
    torch.testing.assert_close(layer(x), torch.tanh(2 * x), rtol=1e-5, atol=1e-6)


def test_affine_after_tanh(kata):
    """weight and bias scale and shift the tanh's output per channel (the last dim)."""
    torch.manual_seed(0)
    weight, bias = random_affine(8)
    weight = weight * 2
    layer = place(kata.DyT(8), 1.0, weight, bias)
    x = torch.randn(4, 8) * 2
    want = formula(x, 1.0, weight, bias).float()
    torch.testing.assert_close(layer(x), want, rtol=1e-5, atol=1e-5)


def test_channels_first(kata):
    """channels_last=False: the channels are dim 1 of (N, C, H, W), each with its weight and
    bias."""
    torch.manual_seed(0)
    for x_shape in ((2, 4, 4, 4), (2, 4, 3, 5)):
        weight, bias = random_affine(4)
        layer = place(kata.DyT(4, channels_last=False), 0.7, weight, bias)
        x = torch.randn(x_shape) * 2
        want = formula(x, 0.7, weight, bias, channels_last=False).float()
        torch.testing.assert_close(layer(x), want, rtol=1e-5, atol=1e-5)


def test_output_like_input(kata):
    """The output has the input's shape and dtype, in both layouts, float32 and float64."""
    torch.manual_seed(0)
    for make, x_shape in (
        (lambda: kata.DyT(8), (3, 5, 8)),
        (lambda: kata.DyT(4, channels_last=False), (2, 4, 3, 5)),
    ):
        for dtype in (torch.float32, torch.float64):
            x = torch.randn(x_shape, dtype=dtype)
            y = make().to(dtype)(x)
            assert y.shape == x.shape
            assert y.dtype == dtype


def test_input_unmodified(kata):
    """The input x is left as it was, in both layouts."""
    torch.manual_seed(0)
    for layer, x_shape in (
        (kata.DyT(8), (3, 5, 8)),
        (kata.DyT(4, channels_last=False), (2, 4, 3, 5)),
    ):
        x = torch.randn(x_shape)
        before = x.clone()
        layer(x)
        assert torch.equal(x, before)


def test_matches_formula(kata):
    """The output is weight · tanh(α · x) + bias, on several shapes, in float32 and float64."""
    torch.manual_seed(0)
    cases = (((8,), (2, 3, 8), True), ((8,), (8,), True), ((4,), (2, 4, 3, 5), False))
    for dtype in (torch.float32, torch.float64):
        for (c,), x_shape, channels_last in cases:
            weight, bias = random_affine(c, dtype)
            layer = kata.DyT(c, channels_last=channels_last).to(dtype)
            place(layer, 0.8, weight, bias)
            x = torch.randn(x_shape, dtype=dtype) * 2
            want = formula(x, 0.8, weight, bias, channels_last).to(dtype)
            torch.testing.assert_close(layer(x), want, rtol=1e-5, atol=1e-5)


def test_gradients_match_formula(kata):
    """Gradients for x, α, weight and bias match autograd on the formula, in float64."""
    torch.manual_seed(0)
    for c, x_shape, channels_last in ((8, (4, 8), True), (4, (2, 4, 3, 3), False)):
        weight, bias = random_affine(c, torch.float64)
        layer = kata.DyT(c, channels_last=channels_last).double()
        place(layer, 0.8, weight, bias)
        x = torch.randn(x_shape, dtype=torch.float64) * 2
        g = torch.randn_like(x)
        xi = x.clone().requires_grad_()
        layer(xi).backward(g)
        got = [xi.grad, layer.alpha.grad.sum(), layer.weight.grad, layer.bias.grad]
        ref = [t.clone().requires_grad_() for t in (x, torch.tensor(0.8, dtype=torch.float64))]
        ref += [weight.clone().requires_grad_(), bias.clone().requires_grad_()]
        formula(ref[0], ref[1], ref[2], ref[3], channels_last).backward(g)
        for have, want in zip(got, (t.grad for t in ref), strict=True):
            torch.testing.assert_close(have, want, rtol=1e-8, atol=1e-10)


def test_alpha_shape_like_official(kata):
    """α has shape (1,), as the official DynamicTanh's: its state_dict loads both ways (torch
    parity)."""
    layer = kata.DyT(8)
    shapes = {name: tuple(t.shape) for name, t in layer.state_dict().items()}
    assert shapes == {"alpha": (1,), "weight": (8,), "bias": (8,)}
    official = {"alpha": torch.tensor([0.3]), "weight": torch.randn(8), "bias": torch.randn(8)}
    layer.load_state_dict(official)
    for name, value in official.items():
        torch.testing.assert_close(layer.state_dict()[name], value, rtol=0, atol=0)


def test_float64_computed_in_float64(kata):
    """A float64 input is computed in float64, to float64's accuracy (torch parity)."""
    torch.manual_seed(0)
    weight, bias = random_affine(8, torch.float64)
    layer = place(kata.DyT(8).double(), 0.8, weight, bias)
    x = torch.randn(4, 8, dtype=torch.float64)
    want = formula(x, 0.8, weight, bias)
    torch.testing.assert_close(layer(x), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(kata, dtype):
    """float16 and bfloat16 inputs, the module in the same dtype, return their own dtype
    (torch parity)."""
    torch.manual_seed(0)
    weight, bias = random_affine(8, dtype)
    layer = place(kata.DyT(8).to(dtype), 0.5, weight, bias)
    x = torch.randn(4, 8).to(dtype)
    y = layer(x)
    assert y.dtype == dtype
    want = formula(x, 0.5, weight, bias).to(dtype)
    torch.testing.assert_close(y, want, rtol=2e-2, atol=2e-2)
