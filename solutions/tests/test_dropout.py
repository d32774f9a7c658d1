"""Reference tests of Dropout: a specification of the kata's layer, property by property.

Each test takes the layer's module as `kata` and checks one property of `kata.Dropout`: the
attributes and the empty state_dict, the output's shape and dtype, the input left as it was,
p = 0 and p = 1, eval mode, the scale 1 / (1 - p), the drop pattern (independent elements, the
kept fraction, a fresh draw from torch's generator on every call), the gradient, then torch
parity (float64 kept in float64, the check of p, inplace=True, half precision).

Dropout is random: every test seeds torch, reads which elements were dropped from y == 0 (the
inputs have no zeros), and judges the pattern with bounds that a correct layer misses far less
often than once in a billion (6σ, or lines of 16 independent draws).
"""

import pytest
import torch
from torch import nn


def nonzero(*shape, dtype=torch.float64):
    """Values of magnitude in [0.5, 1.5) with random signs: no zeros, so a zero is a drop."""
    magnitude = torch.rand(shape, dtype=torch.float64) + 0.5
    sign = torch.randint(0, 2, shape) * 2 - 1
    return (magnitude * sign).to(dtype)


def test_attributes_and_defaults(kata):
    """p and inplace are stored as given, with nn.Dropout's defaults p=0.5 and inplace=False."""
    layer = kata.Dropout()
    assert (layer.p, bool(layer.inplace)) == (0.5, False)
    layer = kata.Dropout(0.2)
    assert (layer.p, bool(layer.inplace)) == (0.2, False)
    layer = kata.Dropout(0.3, True)
    assert (layer.p, bool(layer.inplace)) == (0.3, True)
    layer = kata.Dropout(p=0.7, inplace=True)
    assert (layer.p, bool(layer.inplace)) == (0.7, True)


def test_no_parameters_and_empty_state_dict(kata):
    """Dropout learns nothing: no parameters, no buffers, and an empty state_dict that loads
    into nn.Dropout and back."""
    for p in (0.0, 0.3, 1.0):
        layer = kata.Dropout(p)
        assert list(layer.named_parameters()) == []
        assert list(layer.named_buffers()) == []
        assert list(layer.state_dict()) == []
        nn.Dropout(p).load_state_dict(layer.state_dict())
        layer.load_state_dict(nn.Dropout(p).state_dict())


def test_output_like_input(kata):
    """In training the output has the input's shape and dtype, for several shapes."""
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        for shape in ((5,), (4, 8), (3, 5, 8)):
            x = nonzero(*shape, dtype=dtype)
            y = kata.Dropout(0.5)(x.clone())
            assert isinstance(y, torch.Tensor)
            assert y.shape == x.shape and y.dtype == x.dtype, (shape, dtype, y.shape, y.dtype)


def test_input_unmodified(kata):
    """With inplace=False the input tensor is left as it was: in training, at p = 1, in eval."""
    torch.manual_seed(0)
    for p, training in ((0.5, True), (1.0, True), (0.5, False)):
        x = nonzero(4, 8)
        before = x.clone()
        kata.Dropout(p).train(training)(x)
        assert torch.equal(x, before), f"Dropout({p}) changed x (training={training})"


def test_p_zero_is_identity(kata):
    """p = 0 is a valid probability: in training nothing is dropped and y equals x exactly."""
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        x = nonzero(16, 64, dtype=dtype)
        y = kata.Dropout(0.0)(x.clone())
        torch.testing.assert_close(y, x, rtol=0, atol=0)


def test_p_one_gives_zeros(kata):
    """p = 1 is a valid probability that drops everything: zeros, never NaN, in the output and
    in the gradient."""
    torch.manual_seed(0)
    x = nonzero(4, 8).requires_grad_()
    y = kata.Dropout(1.0)(x.clone())
    torch.testing.assert_close(y.detach(), torch.zeros_like(x), rtol=0, atol=0)
    y.backward(torch.randn(4, 8, dtype=torch.float64))
    assert x.grad is not None
    torch.testing.assert_close(x.grad, torch.zeros_like(x), rtol=0, atol=0)


def test_eval_is_identity(kata):
    """In eval mode the layer returns the input's values, for every p and inplace, and leaves x
    as it was."""
    torch.manual_seed(0)
    for p in (0.3, 0.9, 1.0):
        for inplace in (False, True):
            layer = kata.Dropout(p, inplace=inplace).eval()
            x = nonzero(4, 8, dtype=torch.float32)
            before = x.clone()
            torch.testing.assert_close(layer(x), before, rtol=0, atol=0)
            assert torch.equal(x, before), f"Dropout({p}, inplace={inplace}) in eval changed x"


def test_kept_values_scaled_by_one_over_keep_prob(kata):
    """In training every output element is 0 (dropped) or x / (1 - p) (kept), for several p."""
    torch.manual_seed(0)
    for p in (0.2, 0.75):
        x = nonzero(32, 64)
        y = kata.Dropout(p)(x.clone())
        kept = y != 0
        assert kept.any() and not kept.all(), f"Dropout({p}): kept {int(kept.sum())} of 2048"
        torch.testing.assert_close(y[kept], x[kept] / (1 - p), rtol=1e-6, atol=0)


def test_elements_dropped_independently(kata):
    """Each element has its own draw: no whole rows, columns or channels dropped together, and
    no fixed number of drops (independent draws drop a different number on each call)."""
    torch.manual_seed(0)
    layer = kata.Dropout(0.5)
    kept = layer(torch.ones(16, 16, 16)) != 0
    for dim in range(3):
        # A line of 16 independent draws is all kept or all dropped once in 32768 lines.
        whole = (kept.all(dim) | ~kept.any(dim)).sum().item()
        assert whole < 32, f"{whole} of 256 lines along dim {dim} were kept or dropped whole"
    # The kept count of 10 elements varies: the same count on 200 calls has chance < 1e-120.
    counts = {int((layer(torch.ones(10)) != 0).sum()) for _ in range(200)}
    assert len(counts) > 1, f"kept exactly {counts} of 10 elements on each of 200 calls"


def test_keep_fraction(kata):
    """p is the probability of dropping: a fraction 1 - p of the elements is kept (6σ on
    100,000 elements)."""
    torch.manual_seed(0)
    n = 100_000
    for p in (0.1, 0.5, 0.9):
        kept = (kata.Dropout(p)(torch.ones(n)) != 0).double().mean().item()
        sigma = (p * (1 - p) / n) ** 0.5
        assert abs(kept - (1 - p)) < 6 * sigma, f"Dropout({p}) kept {kept:.4f}, expected {1 - p}"


def test_fresh_mask_each_call(kata):
    """Every forward call draws a new mask: two calls on the same input drop different
    elements."""
    torch.manual_seed(0)
    layer = kata.Dropout(0.5)
    x = nonzero(4, 256)
    first, second = layer(x.clone()) != 0, layer(x.clone()) != 0
    assert not torch.equal(first, second), "two calls dropped exactly the same 1024 elements"


def test_follows_torch_seed(kata):
    """The mask comes from torch's generator: the same torch.manual_seed gives the same
    output."""
    layer = kata.Dropout(0.5)
    x = nonzero(8, 32)
    outputs = []
    for _ in range(2):
        torch.manual_seed(1234)
        outputs.append(layer(x.clone()))
    torch.testing.assert_close(outputs[0], outputs[1], rtol=0, atol=0)


def test_gradient_is_mask_over_keep_prob(kata):
    """The gradient for the input is grad_out times the mask / (1 - p) of that forward call."""
    torch.manual_seed(0)
    p = 0.3
    x = nonzero(5, 3, 8).requires_grad_()
    y = kata.Dropout(p)(x)
    kept = (y.detach() != 0).double()
    grad_out = torch.randn(5, 3, 8, dtype=torch.float64)
    y.backward(grad_out)
    torch.testing.assert_close(x.grad, grad_out * kept / (1 - p), rtol=1e-6, atol=1e-12)


def test_float64_kept_in_float64(kata):
    """After .to(torch.float64), a float64 input is dropped in float64: the kept values are
    x / (1 - p) to float64's precision, not rounded through float32."""
    torch.manual_seed(0)
    p = 0.3
    layer = kata.Dropout(p).to(torch.float64)
    x = nonzero(32, 32)
    y = layer(x.clone())
    assert y.dtype == torch.float64
    kept = y != 0
    assert kept.any()
    torch.testing.assert_close(y[kept], x[kept] / (1 - p), rtol=1e-12, atol=0)


def test_invalid_p_raises(kata):
    """p outside [0, 1] raises ValueError when the layer is built, with nn.Dropout's message."""
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError) as raised:
            kata.Dropout(p)
        with pytest.raises(ValueError) as torch_raised:
            nn.Dropout(p)
        assert str(raised.value) == str(torch_raised.value)


def test_inplace_writes_into_input(kata):
    """With inplace=True, training writes the result into x and returns x itself."""
    torch.manual_seed(0)
    p = 0.5
    x = nonzero(8, 16, dtype=torch.float32)
    before = x.clone()
    y = kata.Dropout(p, inplace=True)(x)
    assert y.data_ptr() == x.data_ptr() and y.shape == x.shape, "did not return x itself"
    kept = x != 0
    assert kept.any() and not kept.all(), f"x kept {int(kept.sum())} of 128 values"
    torch.testing.assert_close(x[kept], before[kept] / (1 - p), rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, dtype):
    """float16 and bfloat16 inputs give the same dtype back, kept values x / (1 - p)."""
    torch.manual_seed(0)
    p = 0.2
    x = nonzero(8, 64, dtype=dtype)
    y = kata.Dropout(p)(x.clone())
    assert y.dtype == dtype, f"{dtype} input gave {y.dtype}"
    kept = y != 0
    assert kept.any()
    want = (x[kept].double() / (1 - p)).to(dtype)
    torch.testing.assert_close(y[kept], want, rtol=2e-2, atol=2e-2)
