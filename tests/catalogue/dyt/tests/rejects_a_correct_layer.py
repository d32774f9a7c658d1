"""An over-strict attempt: demands bit-for-bit equality with weight * torch.tanh(alpha * x) +
bias, where a correct layer may compute it another way (2 · sigmoid(2αx) − 1, one fused
addcmul) and land an ulp away; its other tests are sound."""

import torch

CATCHES = "alpha_buffer, alpha_float, per_channel_alpha, alpha_item"
FALSE_ALARMS = "test_exactly_the_formula"


def test_exactly_the_formula(kata):
    """With a random weight and bias, the output is exactly weight * tanh(alpha * x) + bias."""
    torch.manual_seed(0)
    layer = kata.DyT(8)
    with torch.no_grad():
        layer.weight.copy_(torch.randn(8))
        layer.bias.copy_(torch.randn(8))
    x = torch.randn(4, 8)
    with torch.no_grad():
        want = layer.weight * torch.tanh(layer.alpha * x) + layer.bias
        assert torch.equal(layer(x), want)


def test_alpha_is_a_parameter(kata):
    """alpha is one of the layer's parameters, of one element."""
    params = dict(kata.DyT(8).named_parameters())
    assert "alpha" in params and params["alpha"].numel() == 1


def test_alpha_gets_a_gradient(kata):
    """After a backward pass, alpha has a gradient."""
    layer = kata.DyT(8)
    layer(torch.randn(4, 8)).sum().backward()
    assert layer.alpha.grad is not None
