"""The reference tests of BatchNorm1d/2d: what a correct layer does, property by property.

Each test takes the module under test as `kata` and compares its BatchNorm1d and BatchNorm2d
with torch.nn's, or with the formula: the parameters and buffers a checkpoint holds, the
training-mode normalization with the batch statistics, the running averages and what eval mode
does with them, the gradients, the options (affine, track_running_stats, momentum None and
0.0) and the errors. Values are compared in float64, where torch's layer is exact, at a
tolerance that also accepts a layer computing in float32.
"""

import pytest
import torch
from torch import nn

# (class, input shape): (N, C), (N, C, L) and (N, C, H, W), four channels each.
SHAPES = [("BatchNorm1d", (6, 4)), ("BatchNorm1d", (5, 4, 7)), ("BatchNorm2d", (3, 4, 5, 6))]
TOL = {"rtol": 1e-5, "atol": 1e-5}  # float32's tolerance, for float64 values


def paired(kata, cls, channels=4, **kwargs):
    """Your layer and torch's, with the same random weight, bias and running statistics
    (loaded from torch's state_dict), both in float64."""
    ref = getattr(nn, cls)(channels, **kwargs)
    with torch.no_grad():
        if ref.affine:
            ref.weight.uniform_(0.5, 2.0)
            ref.bias.uniform_(-1.0, 1.0)
        if ref.track_running_stats:
            ref.running_mean.uniform_(-1.0, 1.0)
            ref.running_var.uniform_(0.5, 3.0)
    mine = getattr(kata, cls)(channels, **kwargs)
    mine.load_state_dict(ref.state_dict())
    return mine.double(), ref.double()


def stats_of(layer):
    return [layer.running_mean, layer.running_var, layer.num_batches_tracked]


def test_constructor_arguments(kata):
    """The five constructor arguments are kept as attributes, with torch's defaults."""
    for cls in ("BatchNorm1d", "BatchNorm2d"):
        layer = getattr(kata, cls)(5)
        assert layer.num_features == 5
        assert layer.eps == 1e-5
        assert layer.momentum == 0.1
        assert layer.affine is True
        assert layer.track_running_stats is True
        kwargs = {"eps": 1e-3, "momentum": None, "affine": False, "track_running_stats": False}
        layer = getattr(kata, cls)(7, **kwargs)
        assert layer.num_features == 7
        for name, value in kwargs.items():
            assert getattr(layer, name) == value, name


def test_parameters(kata):
    """weight and bias are nn.Parameters of shape (C,), starting at ones and zeros."""
    for cls in ("BatchNorm1d", "BatchNorm2d"):
        layer = getattr(kata, cls)(5)
        params = dict(layer.named_parameters())
        assert sorted(params) == ["bias", "weight"]
        assert isinstance(layer.weight, nn.Parameter) and isinstance(layer.bias, nn.Parameter)
        torch.testing.assert_close(layer.weight.detach(), torch.ones(5), rtol=0, atol=0)
        torch.testing.assert_close(layer.bias.detach(), torch.zeros(5), rtol=0, atol=0)


def test_buffers(kata):
    """running_mean (zeros), running_var (ones) and num_batches_tracked (a 0-dim long 0) are
    buffers, exactly as in a fresh nn.BatchNorm (memory never written reads as NaN here)."""
    for cls in ("BatchNorm1d", "BatchNorm2d"):
        layer, ref = getattr(kata, cls)(5), getattr(nn, cls)(5)
        buffers = dict(layer.named_buffers())
        assert sorted(buffers) == ["num_batches_tracked", "running_mean", "running_var"]
        for name, want in ref.named_buffers():
            torch.testing.assert_close(buffers[name], want, rtol=0, atol=0)
        assert buffers["num_batches_tracked"].dim() == 0


def test_state_dict_round_trip(kata):
    """A state_dict loads from nn.BatchNorm and back, with torch's keys, shapes and dtypes."""
    for cls in ("BatchNorm1d", "BatchNorm2d"):
        for kwargs in ({}, {"affine": False}, {"track_running_stats": False}):
            mine, ref = paired(kata, cls, 3, **kwargs)
            theirs, ours = ref.state_dict(), mine.state_dict()
            assert sorted(ours) == sorted(theirs)
            for key, value in theirs.items():
                assert ours[key].dtype == value.dtype, key
                torch.testing.assert_close(ours[key], value, rtol=0, atol=0)
            back = getattr(nn, cls)(3, **kwargs).double()
            back.load_state_dict(mine.state_dict())
            for key, value in back.state_dict().items():
                torch.testing.assert_close(value, theirs[key], rtol=0, atol=0)


def test_to_moves_every_tensor(kata):
    """After .to(torch.float64) every floating tensor the layer holds is float64: no plain
    tensor attribute is left behind."""
    layer = kata.BatchNorm2d(3).to(torch.float64)
    for name, value in vars(layer).items():
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            assert value.dtype == torch.float64, name
    for name, value in layer.state_dict().items():
        if value.is_floating_point():
            assert value.dtype == torch.float64, name


def test_output_like_input(kata):
    """The output has the input's shape and dtype, in training and in eval mode."""
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        for cls, shape in SHAPES:
            layer = getattr(kata, cls)(4).to(dtype)
            x = torch.randn(shape, dtype=dtype)
            for training in (True, False):
                y = layer.train(training)(x)
                assert y.shape == x.shape and y.dtype == x.dtype


def test_training_matches_torch(kata):
    """In training mode each channel is normalized with the mean and biased variance of its
    values over N (and L, or H and W), eps inside the root, then scaled and shifted."""
    torch.manual_seed(1)
    cases = [*SHAPES, ("BatchNorm1d", (2, 4)), ("BatchNorm1d", (1, 4, 3)),
             ("BatchNorm2d", (1, 4, 2, 3)), ("BatchNorm2d", (2, 4, 3, 4))]  # fmt: skip
    for eps in (1e-5, 0.5):
        for cls, shape in cases:
            mine, ref = paired(kata, cls, eps=eps)
            x = torch.randn(shape, dtype=torch.float64) * 3 + 2
            torch.testing.assert_close(mine(x.clone()), ref(x).detach(), **TOL)


def test_biased_variance_by_formula(kata):
    """Training normalizes with the biased batch variance (divide by m, not m - 1)."""
    x = torch.tensor([[1.0, -2.0], [2.0, 0.0], [4.0, 2.0], [7.0, 4.0]], dtype=torch.float64)
    layer = kata.BatchNorm1d(2, affine=False).double()
    mean = x.mean(0)
    var = ((x - mean) ** 2).mean(0)
    torch.testing.assert_close(layer(x.clone()), (x - mean) / (var + 1e-5).sqrt(), **TOL)


def test_running_stats_follow_torch(kata):
    """Each training step folds the batch in: count + 1, running = (1 - momentum) * running +
    momentum * batch statistic, with the unbiased variance (no eps); momentum=None averages
    every batch equally, momentum=0.0 moves nothing."""
    torch.manual_seed(2)
    for momentum in (0.1, 0.3, None, 0.0):
        for cls, shape in SHAPES:
            mine, ref = paired(kata, cls, eps=0.5, momentum=momentum)
            for step in range(3):
                x = torch.randn(shape, dtype=torch.float64) * (step + 1) + 2 * step
                mine(x.clone())
                ref(x)
                have, want = stats_of(mine), stats_of(ref)
                torch.testing.assert_close(have[0], want[0], **TOL)
                torch.testing.assert_close(have[1], want[1], **TOL)
                assert have[2].dtype == torch.long and have[2].dim() == 0
                assert int(have[2]) == int(want[2])


def test_first_step_from_initial_stats(kata):
    """A fresh layer's first step moves running_mean from 0 and running_var from 1, like any
    later step: running_mean = 0.1 * batch mean, running_var = 0.9 + 0.1 * unbiased variance."""
    torch.manual_seed(3)
    x = torch.randn(8, 3, dtype=torch.float64) * 2 + 3
    layer = kata.BatchNorm1d(3).double()
    layer(x.clone())
    torch.testing.assert_close(layer.running_mean, 0.1 * x.mean(0), **TOL)
    torch.testing.assert_close(layer.running_var, 0.9 + 0.1 * x.var(0, unbiased=True), **TOL)


def test_eval_uses_running_stats(kata):
    """In eval mode every sample is normalized with running_mean and running_var (eps inside
    the root), whatever the rest of the batch holds, and a single sample works."""
    torch.manual_seed(4)
    for eps in (1e-5, 0.5):
        for cls, shape in [*SHAPES, ("BatchNorm1d", (1, 4))]:
            mine, ref = paired(kata, cls, eps=eps)
            mine.eval(), ref.eval()
            x = torch.randn(shape, dtype=torch.float64) * 2 + 1
            view = (1, 4) + (1,) * (x.dim() - 2)
            want = (x - ref.running_mean.view(view)) / (ref.running_var.view(view) + eps).sqrt()
            want = want * ref.weight.detach().view(view) + ref.bias.detach().view(view)
            torch.testing.assert_close(mine(x.clone()), want, **TOL)


def test_eval_leaves_running_stats(kata):
    """Eval mode leaves running_mean, running_var and num_batches_tracked as they were."""
    torch.manual_seed(5)
    for momentum in (0.1, None):
        for cls, shape in SHAPES:
            mine, _ = paired(kata, cls, momentum=momentum)
            before = [t.clone() for t in stats_of(mine)]
            mine.eval()(torch.randn(shape, dtype=torch.float64) * 3 + 1)
            for have, want in zip(stats_of(mine), before, strict=True):
                torch.testing.assert_close(have, want, rtol=0, atol=0)


def test_input_unmodified(kata):
    """The caller's input keeps its values, in training and in eval mode."""
    torch.manual_seed(6)
    for cls, shape in SHAPES:
        for training in (True, False):
            layer = getattr(kata, cls)(4).train(training)
            x = torch.randn(shape) * 2 + 1
            before = x.clone()
            layer(x)
            torch.testing.assert_close(x, before, rtol=0, atol=0)


def test_gradients_match_torch(kata):
    """Gradients of the input, weight and bias match torch's in training and eval mode: in
    training they flow through the batch mean and variance too."""
    torch.manual_seed(7)
    for cls, shape in (("BatchNorm1d", (5, 4, 3)), ("BatchNorm2d", (3, 4, 2, 3))):
        for training in (True, False):
            mine, ref = paired(kata, cls)
            mine.train(training), ref.train(training)
            x = torch.randn(shape, dtype=torch.float64) * 2 + 1
            g = torch.randn(shape, dtype=torch.float64)
            grads = []
            for layer in (mine, ref):
                xi = x.clone().requires_grad_(True)
                (layer(xi) * g).sum().backward()
                grads.append([xi.grad, layer.weight.grad, layer.bias.grad])
            for have, want in zip(*grads, strict=True):
                torch.testing.assert_close(have, want, **TOL)


def test_running_stats_carry_no_history(kata):
    """Running statistics are updated outside autograd: they never require grad, and a
    backward after several training steps works."""
    torch.manual_seed(8)
    layer = kata.BatchNorm2d(3).double()
    for _ in range(2):
        x = torch.randn(4, 3, 2, 2, dtype=torch.float64, requires_grad=True)
        layer(x).sum().backward()
        for stat in (layer.running_mean, layer.running_var):
            assert not stat.requires_grad and stat.grad_fn is None
    x = torch.randn(4, 3, 2, 2, dtype=torch.float64, requires_grad=True)
    layer.eval()(x).square().sum().backward()
    assert x.grad is not None


def test_affine_false(kata):
    """affine=False: no parameters, weight and bias None, and the output is x̂ itself."""
    torch.manual_seed(9)
    for cls, shape in SHAPES:
        layer = getattr(kata, cls)(4, affine=False)
        assert list(layer.parameters()) == []
        assert layer.weight is None and layer.bias is None
        mine, ref = paired(kata, cls, affine=False)
        for training in (False, True):
            mine.train(training), ref.train(training)
            x = torch.randn(shape, dtype=torch.float64) * 3 + 2
            torch.testing.assert_close(mine(x.clone()), ref(x), **TOL)


def test_numerically_stable(kata):
    """Stable in float32 for a large mean: the output and running_var for 1000 + x are those
    for x (centre first, no E[x²] - E[x]² shortcut)."""
    torch.manual_seed(10)
    x = torch.randn(512, 4)
    outputs, variances = [], []
    for shift in (0.0, 1000.0):
        layer = kata.BatchNorm1d(4, affine=False)
        outputs.append(layer(x + shift))
        variances.append(layer.running_var.clone())
    torch.testing.assert_close(outputs[1], outputs[0], rtol=0, atol=2e-3)
    torch.testing.assert_close(variances[1], variances[0], rtol=0, atol=1e-3)


def test_track_running_stats_false(kata):
    """track_running_stats=False: the three buffers are None and batch statistics are used
    in both modes."""
    torch.manual_seed(11)
    for cls, shape in SHAPES:
        layer = getattr(kata, cls)(4, track_running_stats=False)
        assert dict(layer.named_buffers()) == {}
        assert layer.running_mean is None and layer.running_var is None
        assert layer.num_batches_tracked is None
        mine, ref = paired(kata, cls, track_running_stats=False)
        for training in (True, False):
            mine.train(training), ref.train(training)
            x = torch.randn(shape, dtype=torch.float64) * 3 + 2
            torch.testing.assert_close(mine(x.clone()), ref(x).detach(), **TOL)


def test_wrong_rank_raises(kata):
    """BatchNorm1d takes 2D or 3D input and BatchNorm2d 4D: any other rank raises ValueError."""
    cases = [("BatchNorm1d", (3,)), ("BatchNorm1d", (2, 3, 4, 5)), ("BatchNorm2d", (2, 3)),
             ("BatchNorm2d", (2, 3, 4)), ("BatchNorm2d", (2, 3, 4, 5, 2))]  # fmt: skip
    for cls, shape in cases:
        for training in (True, False):
            layer = getattr(kata, cls)(3).train(training)
            with pytest.raises(ValueError):
                layer(torch.randn(shape))


def test_single_value_per_channel(kata):
    """One value per channel raises ValueError where batch statistics are needed (training,
    or eval without running statistics); a single sample with L > 1, or eval with running
    statistics, works."""
    torch.manual_seed(12)
    for cls, shape, kwargs, training in (
        ("BatchNorm1d", (1, 3), {}, True),
        ("BatchNorm1d", (1, 3, 1), {}, True),
        ("BatchNorm2d", (1, 3, 1, 1), {}, True),
        ("BatchNorm1d", (1, 3), {"track_running_stats": False}, False),
    ):
        layer = getattr(kata, cls)(3, **kwargs).train(training)
        with pytest.raises(ValueError, match="more than 1 value per channel"):
            layer(torch.randn(shape))
    for cls, shape, training in (("BatchNorm1d", (1, 3, 4), True),
                                 ("BatchNorm2d", (1, 3, 1, 1), False)):  # fmt: skip
        mine, ref = paired(kata, cls, 3)
        mine.train(training), ref.train(training)
        x = torch.randn(shape, dtype=torch.float64)
        torch.testing.assert_close(mine(x.clone()), ref(x).detach(), **TOL)


def test_empty_batch(kata):
    """An empty batch (N = 0) gives an empty output; training counts it in
    num_batches_tracked but leaves running_mean and running_var as they were."""
    for cls, shape in (("BatchNorm1d", (0, 4)), ("BatchNorm1d", (0, 4, 3)),
                       ("BatchNorm2d", (0, 4, 2, 2))):  # fmt: skip
        mine, ref = paired(kata, cls)
        for training in (True, False):
            mine.train(training), ref.train(training)
            x = torch.randn(shape, dtype=torch.float64)
            y = mine(x)
            ref(x)
            assert y.shape == x.shape
            have, want = stats_of(mine), stats_of(ref)
            torch.testing.assert_close(have[0], want[0], rtol=0, atol=0)
            torch.testing.assert_close(have[1], want[1], rtol=0, atol=0)
            assert int(have[2]) == int(want[2])


def test_half_input_in_float32_layer(kata):
    """A float32 layer given float16 or bfloat16 input (as under autocast) returns the input's
    dtype, with torch's values to half precision."""
    torch.manual_seed(13)
    for dtype in (torch.float16, torch.bfloat16):
        x = torch.randn(4, 3, 3, 3).to(dtype)
        for training in (True, False):
            mine, ref = paired(kata, "BatchNorm2d", 3)
            mine, ref = mine.float().train(training), ref.float().train(training)
            y = mine(x.clone())
            assert y.dtype == dtype
            want = ref(x.float()).detach()
            torch.testing.assert_close(y.float(), want, rtol=2e-2, atol=3e-2)
