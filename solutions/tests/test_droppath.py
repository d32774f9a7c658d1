"""Reference tests of DropPath: a specification of the kata's layer, property by property.

Each test takes the layer's module as `kata` and checks one property of `kata.DropPath` and
`kata.drop_path` against timm's DropPath semantics: the attributes and the empty state_dict,
the output's shape for inputs of rank 1 to 4, the input left as it was, eval mode and the
defaults, whole samples dropped with independent draws (the kept fraction, a fresh draw from
torch's generator on every call), the scale 1 / (1 - p) and scale_by_keep=False, drop_prob = 1,
the gradient, then torch parity (float64 kept in float64, non-contiguous and half-precision
inputs).

DropPath is random: every test seeds torch, reads which values were dropped from y == 0 (the
inputs have no zeros), and judges the draw with bounds that a correct layer misses far less
often than once in a billion (6σ, or hundreds of independent samples).
"""

import pytest
import torch


def nonzero(*shape, dtype=torch.float64):
    """Values of magnitude in [0.5, 1.5) with random signs: no zeros, so a zero is a drop."""
    magnitude = torch.rand(shape, dtype=torch.float64) + 0.5
    sign = torch.randint(0, 2, shape) * 2 - 1
    return (magnitude * sign).to(dtype)


def samples_kept(y, x):
    """The (N,) mask of samples y keeps; each sample of y must be all zeros or all nonzero."""
    rows = (y.detach() != 0).reshape(x.shape[0], -1)
    whole = rows.all(1) | ~rows.any(1)
    assert whole.all(), f"samples {whole.logical_not().nonzero().flatten().tolist()} are mixed"
    return rows.all(1)


def test_attributes_and_defaults(kata):
    """drop_prob and scale_by_keep are stored as given, with timm's defaults 0.0 and True."""
    layer = kata.DropPath()
    assert (layer.drop_prob, bool(layer.scale_by_keep)) == (0.0, True)
    layer = kata.DropPath(0.2)
    assert (layer.drop_prob, bool(layer.scale_by_keep)) == (0.2, True)
    layer = kata.DropPath(0.3, False)
    assert (layer.drop_prob, bool(layer.scale_by_keep)) == (0.3, False)
    layer = kata.DropPath(drop_prob=0.1, scale_by_keep=False)
    assert (layer.drop_prob, bool(layer.scale_by_keep)) == (0.1, False)


def test_no_parameters_and_empty_state_dict(kata):
    """DropPath learns nothing: no parameters, no buffers, an empty state_dict."""
    for p in (0.0, 0.3, 1.0):
        layer = kata.DropPath(p)
        assert list(layer.named_parameters()) == []
        assert list(layer.named_buffers()) == []
        assert list(layer.state_dict()) == []


def test_output_like_input(kata):
    """In training the output has the input's shape and dtype, for inputs of rank 1 to 4, from
    the module and from drop_path."""
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        for shape in ((8,), (8, 5), (8, 3, 5), (8, 3, 4, 5)):
            x = nonzero(*shape, dtype=dtype)
            for y in (kata.DropPath(0.5)(x.clone()), kata.drop_path(x.clone(), 0.5, True)):
                assert isinstance(y, torch.Tensor)
                assert y.shape == x.shape and y.dtype == x.dtype, (shape, y.shape, y.dtype)


def test_input_unmodified(kata):
    """The input tensor is left as it was, in training and in eval, module and function."""
    torch.manual_seed(0)
    for training in (True, False):
        x = nonzero(8, 16)
        before = x.clone()
        kata.DropPath(0.5).train(training)(x)
        kata.drop_path(x, 0.5, training)
        kata.DropPath(1.0).train(training)(x)
        assert torch.equal(x, before), f"DropPath changed x (training={training})"


def test_eval_and_defaults_are_identity(kata):
    """Eval mode, training=False and drop_prob = 0 return x's values; drop_path's defaults are
    drop_prob=0.0 and training=False."""
    torch.manual_seed(0)
    x = nonzero(8, 16)
    same = {"rtol": 0, "atol": 0}
    for p in (0.3, 0.9, 1.0):
        torch.testing.assert_close(kata.DropPath(p).eval()(x), x, **same)
        torch.testing.assert_close(kata.DropPath(p, False).eval()(x), x, **same)
        torch.testing.assert_close(kata.drop_path(x, p, False), x, **same)
        torch.testing.assert_close(kata.drop_path(x, p), x, **same)
    torch.testing.assert_close(kata.drop_path(x), x, **same)
    torch.testing.assert_close(kata.drop_path(x, training=True), x, **same)
    torch.testing.assert_close(kata.drop_path(x, 0.0, True), x, **same)
    torch.testing.assert_close(kata.DropPath()(x), x, **same)


def test_whole_samples_dropped(kata):
    """Each sample (along dim 0) is kept or dropped as a whole, for inputs of rank 2 to 4."""
    torch.manual_seed(0)
    for shape in ((64, 16), (32, 3, 8), (16, 2, 4, 4)):
        x = nonzero(*shape)
        samples_kept(kata.DropPath(0.5)(x.clone()), x)
        samples_kept(kata.drop_path(x.clone(), 0.5, True), x)


def test_each_sample_draws_on_its_own(kata):
    """Each sample has its own draw, not one for the whole batch: of 256 samples some are kept
    and some dropped."""
    torch.manual_seed(0)
    x = nonzero(256, 4)
    kept = (kata.DropPath(0.5)(x.clone()) != 0).reshape(256, -1).any(1)
    assert kept.any() and not kept.all(), "all 256 samples were kept or dropped together"


def test_keep_fraction(kata):
    """drop_prob is the probability of dropping: a fraction 1 - drop_prob of the samples
    survives (6σ on 40,000 samples)."""
    torch.manual_seed(0)
    n = 40_000
    for p in (0.1, 0.5, 0.8):
        y = kata.DropPath(p)(torch.ones(n, 1))
        kept = (y != 0).double().mean().item()
        sigma = (p * (1 - p) / n) ** 0.5
        assert abs(kept - (1 - p)) < 6 * sigma, f"DropPath({p}) kept {kept:.4f}, expected {1 - p}"


def test_survivors_scaled_by_one_over_keep_prob(kata):
    """Kept samples are x / (1 - drop_prob), from the module and from drop_path, for several
    drop_prob."""
    torch.manual_seed(0)
    for p in (0.25, 0.6):
        x = nonzero(64, 8)
        for y in (kata.DropPath(p)(x.clone()), kata.drop_path(x.clone(), p, True)):
            kept = y != 0
            assert kept.any(), f"drop_prob={p}: no sample of 64 survived"
            torch.testing.assert_close(y[kept], x[kept] / (1 - p), rtol=1e-6, atol=0)


def test_no_scaling_without_scale_by_keep(kata):
    """With scale_by_keep=False the kept samples are x itself, unscaled."""
    torch.manual_seed(0)
    p = 0.3
    x = nonzero(128, 4)
    outputs = (
        kata.DropPath(p, scale_by_keep=False)(x.clone()),
        kata.drop_path(x.clone(), p, True, scale_by_keep=False),
    )
    for y in outputs:
        kept = y != 0
        assert kept.any() and not kept.all(), f"kept {int(kept.sum())} of 512 values"
        torch.testing.assert_close(y[kept], x[kept], rtol=0, atol=0)


def test_drop_prob_one_gives_zeros(kata):
    """drop_prob = 1 drops every sample: zeros, never NaN, in the output and the gradient."""
    torch.manual_seed(0)
    for scale_by_keep in (True, False):
        x = nonzero(8, 4).requires_grad_()
        y = kata.DropPath(1.0, scale_by_keep)(x.clone())
        torch.testing.assert_close(y.detach(), torch.zeros_like(x), rtol=0, atol=0)
        y.backward(torch.randn(8, 4, dtype=torch.float64))
        assert x.grad is not None
        torch.testing.assert_close(x.grad, torch.zeros_like(x), rtol=0, atol=0)
    y = kata.drop_path(nonzero(8, 4), 1.0, True)
    torch.testing.assert_close(y, torch.zeros(8, 4, dtype=torch.float64), rtol=0, atol=0)


def test_gradient_is_mask_over_keep_prob(kata):
    """The gradient for the input is grad_out times the per-sample mask / (1 - drop_prob) of
    that forward call."""
    torch.manual_seed(0)
    p = 0.4
    x = nonzero(32, 6).requires_grad_()
    y = kata.DropPath(p)(x)
    kept = (y.detach() != 0).double()
    grad_out = torch.randn(32, 6, dtype=torch.float64)
    y.backward(grad_out)
    torch.testing.assert_close(x.grad, grad_out * kept / (1 - p), rtol=1e-6, atol=1e-12)


def test_fresh_draw_each_call(kata):
    """Every forward call draws anew: two calls on the same input drop different samples."""
    torch.manual_seed(0)
    layer = kata.DropPath(0.5)
    x = nonzero(128, 4)
    first, second = layer(x.clone()) != 0, layer(x.clone()) != 0
    assert not torch.equal(first, second), "two calls dropped exactly the same 128 samples"


def test_follows_torch_seed(kata):
    """The draw comes from torch's generator: the same torch.manual_seed gives the same
    output."""
    layer = kata.DropPath(0.5)
    x = nonzero(64, 4)
    outputs = []
    for _ in range(2):
        torch.manual_seed(1234)
        outputs.append(layer(x.clone()))
    torch.testing.assert_close(outputs[0], outputs[1], rtol=0, atol=0)


def test_float64_kept_in_float64(kata):
    """After .to(torch.float64), a float64 input is dropped in float64: the kept samples are
    x / (1 - drop_prob) to float64's precision, not rounded through float32."""
    torch.manual_seed(0)
    p = 0.3
    x = nonzero(64, 8)
    for y in (kata.DropPath(p).to(torch.float64)(x.clone()), kata.drop_path(x.clone(), p, True)):
        assert y.dtype == torch.float64
        kept = y != 0
        assert kept.any()
        torch.testing.assert_close(y[kept], x[kept] / (1 - p), rtol=1e-12, atol=0)


def test_non_contiguous_input(kata):
    """A transposed or sliced input is dropped like any other: whole samples, scaled."""
    torch.manual_seed(0)
    base = nonzero(64, 6, 5)
    for x in (base.transpose(1, 2), base[:, ::2]):
        for y in (kata.DropPath(0.5)(x), kata.drop_path(x, 0.5, True)):
            assert y.shape == x.shape
            kept = samples_kept(y, x)
            assert kept.any()
            torch.testing.assert_close(y[kept], x[kept] / 0.5, rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, dtype):
    """float16 and bfloat16 inputs give the same dtype back, kept samples x / (1 - p)."""
    torch.manual_seed(0)
    p = 0.25
    x = nonzero(32, 8, dtype=dtype)
    y = kata.DropPath(p)(x.clone())
    assert y.dtype == dtype, f"{dtype} input gave {y.dtype}"
    kept = y != 0
    assert kept.any()
    want = (x[kept].double() / (1 - p)).to(dtype)
    torch.testing.assert_close(y[kept], want, rtol=2e-2, atol=2e-2)
