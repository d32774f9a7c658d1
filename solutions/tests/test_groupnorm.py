"""Tests of GroupNorm, written as its specification: each test one property of
torch.nn.GroupNorm, checked on the layer under test (`kata.GroupNorm`).

The interview core first (the parameters and the state_dict, the formula per sample and group
of consecutive channels, eps, gradients, train and eval, the input left alone, float32 with a
large mean), then torch parity: float64 computed in float64, half precision, a divisibility
error, a non-contiguous input and an empty batch.
"""

import pytest
import torch
from torch import nn

F64 = torch.float64


def with_random_affine(layer, seed=0):
    """layer, its weight and bias set to random values (through a torch state_dict)."""
    torch.manual_seed(seed)
    ref = nn.GroupNorm(layer.num_groups, layer.num_channels, eps=layer.eps)
    with torch.no_grad():
        ref.weight.normal_()
        ref.bias.normal_()
    layer.load_state_dict(ref.state_dict())
    return layer, ref


def group_norm_f64(x, groups, eps):
    """The formula in float64, without affine: per sample, over each group's channels and
    positions, biased variance, eps inside the root."""
    n, c = x.shape[:2]
    g = x.double().reshape(n, groups, c // groups, -1)
    mean = g.mean((2, 3), keepdim=True)
    var = (g - mean).square().mean((2, 3), keepdim=True)
    return ((g - mean) / torch.sqrt(var + eps)).reshape(x.shape)


def test_parameters_like_torch(kata):
    """weight (ones) and bias (zeros) are per-channel nn.Parameters of shape (C,), and the four
    arguments are kept as attributes."""
    layer = kata.GroupNorm(2, 6, eps=1e-3)
    params = dict(layer.named_parameters())
    assert set(params) == {"weight", "bias"}
    torch.testing.assert_close(params["weight"].detach(), torch.ones(6), rtol=0, atol=0)
    torch.testing.assert_close(params["bias"].detach(), torch.zeros(6), rtol=0, atol=0)
    assert (layer.num_groups, layer.num_channels, layer.eps, layer.affine) == (2, 6, 1e-3, True)


def test_state_dict_round_trip(kata):
    """The state_dict has nn.GroupNorm's keys and shapes, and loads both ways."""
    mine, ref = kata.GroupNorm(4, 8), nn.GroupNorm(4, 8)
    assert set(mine.state_dict()) == set(ref.state_dict())
    with torch.no_grad():
        ref.weight.uniform_()
        ref.bias.uniform_()
    mine.load_state_dict(ref.state_dict())
    back = nn.GroupNorm(4, 8)
    back.load_state_dict(mine.state_dict())
    torch.testing.assert_close(back.weight, ref.weight, rtol=0, atol=0)
    torch.testing.assert_close(back.bias, ref.bias, rtol=0, atol=0)


def test_no_affine(kata):
    """affine=False: no parameters, weight and bias are None, an empty state_dict."""
    layer = kata.GroupNorm(2, 6, affine=False)
    assert list(layer.parameters()) == []
    assert layer.weight is None and layer.bias is None
    assert layer.state_dict().keys() == nn.GroupNorm(2, 6, affine=False).state_dict().keys()
    assert layer.affine is False


@pytest.mark.parametrize(
    ("groups", "channels", "shape"),
    [(1, 6, (3, 6, 5)), (3, 6, (2, 6, 4, 3)), (6, 6, (2, 6, 7)), (2, 8, (4, 8)), (4, 8, (2, 8, 3))],
)
@pytest.mark.parametrize("eps", [1e-5, 0.1])
def test_forward_matches_torch(kata, groups, channels, shape, eps):
    """The output matches nn.GroupNorm with random weight and bias: G = 1, a divisor of C and
    C, over ranks 2 to 4, eps 1e-5 and 0.1."""
    mine, ref = with_random_affine(kata.GroupNorm(groups, channels, eps=eps).double())
    torch.manual_seed(1)
    x = torch.randn(shape, dtype=F64) * 3 + 1
    torch.testing.assert_close(mine(x), ref.double()(x), rtol=1e-7, atol=1e-7)


def test_no_affine_output(kata):
    """affine=False returns the normalized input itself: nn.GroupNorm(affine=False)'s output."""
    torch.manual_seed(2)
    x = torch.randn(3, 6, 4, dtype=F64) * 2 + 1
    mine = kata.GroupNorm(3, 6, affine=False).double()
    ref = nn.GroupNorm(3, 6, affine=False).double()
    torch.testing.assert_close(mine(x), ref(x), rtol=1e-7, atol=1e-7)


def test_statistics_per_sample(kata):
    """Each sample is normalized on its own: the other samples of the batch do not change it."""
    torch.manual_seed(3)
    layer = kata.GroupNorm(3, 6).double()
    x = torch.randn(4, 6, 5, dtype=F64)
    others = x.clone()
    others[1:] = others[1:] * 10 + 5
    torch.testing.assert_close(layer(others)[:1], layer(x[:1].clone()), rtol=1e-9, atol=1e-9)


def test_groups_are_consecutive_channels(kata):
    """Group g holds channels g*C/G to (g+1)*C/G - 1: changing channel 0 changes only the
    outputs of channels 0 and 1 in GroupNorm(3, 6)."""
    torch.manual_seed(4)
    layer = kata.GroupNorm(3, 6, affine=False).double()
    x = torch.randn(2, 6, 5, dtype=F64)
    moved = x.clone()
    moved[0, 0] += 3.0
    changed = (layer(moved) - layer(x)).abs()[0].amax(-1) > 1e-9
    assert changed.tolist() == [True, True, False, False, False, False]


def test_eps_inside_the_root(kata):
    """eps is added to the variance inside the square root (small inputs, eps = 0.05)."""
    torch.manual_seed(5)
    x = torch.randn(3, 4, 5, dtype=F64) * 0.1
    layer = kata.GroupNorm(2, 4, eps=0.05, affine=False).double()
    torch.testing.assert_close(layer(x), group_norm_f64(x, 2, 0.05), rtol=1e-9, atol=1e-9)


def test_biased_variance(kata):
    """The variance is the biased one (divide by m): [1, 2, 4, 7] in one group, eps = 0."""
    x = torch.tensor([[[1.0], [2.0], [4.0], [7.0]]], dtype=F64)
    layer = kata.GroupNorm(1, 4, eps=0.0, affine=False).double()
    torch.testing.assert_close(layer(x), group_norm_f64(x, 1, 0.0), rtol=1e-9, atol=1e-9)


def test_gradients_match_torch(kata):
    """Gradients of the input, weight and bias match nn.GroupNorm's (float64)."""
    mine, ref = with_random_affine(kata.GroupNorm(2, 6).double())
    ref = ref.double()
    torch.manual_seed(6)
    x = torch.randn(3, 6, 5, dtype=F64) * 2 + 1
    g = torch.randn(3, 6, 5, dtype=F64)
    xm, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
    mine(xm).backward(g)
    ref(xr).backward(g)
    torch.testing.assert_close(xm.grad, xr.grad, rtol=1e-7, atol=1e-7)
    torch.testing.assert_close(mine.weight.grad, ref.weight.grad, rtol=1e-7, atol=1e-7)
    torch.testing.assert_close(mine.bias.grad, ref.bias.grad, rtol=1e-7, atol=1e-7)


def test_input_unmodified(kata):
    """forward leaves the caller's input as it was."""
    torch.manual_seed(7)
    x = torch.randn(3, 6, 5)
    before = x.clone()
    kata.GroupNorm(2, 6)(x)
    torch.testing.assert_close(x, before, rtol=0, atol=0)


def test_same_in_eval_mode(kata):
    """eval mode gives what training mode gives: no running statistics."""
    torch.manual_seed(8)
    layer = kata.GroupNorm(3, 6).double()
    layer(torch.randn(4, 6, 5, dtype=F64))
    x = torch.randn(4, 6, 5, dtype=F64) * 3 + 2
    in_eval = layer.eval()(x)
    in_training = layer.train()(x)
    torch.testing.assert_close(in_eval, in_training, rtol=1e-12, atol=1e-12)


def test_stable_with_a_large_mean(kata):
    """float32 with a group mean of 1000 and unit spread stays accurate (no E[x²] - E[x]²)."""
    torch.manual_seed(9)
    x = 1000 + torch.randn(4, 8, 64)
    layer = kata.GroupNorm(2, 8, affine=False)
    want = group_norm_f64(x, 2, 1e-5).float()
    torch.testing.assert_close(layer(x), want, rtol=1e-3, atol=1e-3)


def test_output_like_input(kata):
    """The output has the input's shape and dtype, float32 and float64."""
    for dtype in (torch.float32, F64):
        x = torch.randn(2, 6, 3, 2, dtype=dtype)
        y = kata.GroupNorm(3, 6).to(dtype)(x)
        assert y.shape == x.shape and y.dtype == dtype


def test_float64_computed_in_float64(kata):
    """Torch parity: a float64 layer computes in float64, to float64's precision."""
    torch.manual_seed(10)
    x = torch.randn(3, 6, 5, dtype=F64) * 0.01
    layer = kata.GroupNorm(2, 6, eps=0.1, affine=False).to(F64)
    torch.testing.assert_close(layer(x), group_norm_f64(x, 2, 0.1), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(kata, dtype):
    """Torch parity: half inputs give half outputs, with statistics in float32 (x = 384 + randn
    shows statistics rounded to half)."""
    torch.manual_seed(11)
    x = (384 + torch.randn(4, 8, 16)).to(dtype)
    y = kata.GroupNorm(2, 8).to(dtype)(x)
    assert y.dtype == dtype
    want = group_norm_f64(x, 2, 1e-5)
    torch.testing.assert_close(y.double(), want, rtol=0, atol=2e-2)


def test_indivisible_channels_raise(kata):
    """Torch parity: num_channels not divisible by num_groups raises ValueError."""
    for groups, channels in ((4, 6), (5, 8)):
        with pytest.raises(ValueError):
            kata.GroupNorm(groups, channels)


def test_noncontiguous_input(kata):
    """Torch parity: a transposed (non-contiguous) input is normalized like its copy."""
    torch.manual_seed(12)
    layer = kata.GroupNorm(2, 6)
    x = torch.randn(3, 5, 6).transpose(1, 2)
    torch.testing.assert_close(layer(x), layer(x.contiguous()), rtol=1e-6, atol=1e-6)


def test_empty_batch(kata):
    """Torch parity: an empty batch (N = 0) gives an empty output of the same shape."""
    for shape in ((0, 6, 4), (0, 6)):
        x = torch.randn(shape)
        assert kata.GroupNorm(3, 6)(x).shape == x.shape
