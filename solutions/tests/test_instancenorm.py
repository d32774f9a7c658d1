"""The reference tests of InstanceNorm1d/2d: what a correct layer does, property by property.

Each test takes the module under test as `kata` and compares its InstanceNorm1d and
InstanceNorm2d with torch.nn's, or with the formula: the defaults (no affine, no running
statistics), the parameters and buffers a checkpoint holds, each sample's channel normalized
over its own positions, the running averages and eval mode, unbatched inputs, gradients, and
torch's errors and warning. Values are compared in float64, where torch's layer is exact, at a
tolerance that also accepts a layer computing in float32, except where the test is about the
dtype it computes in.
"""

import warnings

import pytest
import torch
from torch import nn

CLASSES = ("InstanceNorm1d", "InstanceNorm2d")
# (class, batched input shape), three channels: N, C and the positions all of different sizes.
SHAPES = [("InstanceNorm1d", (4, 3, 6)), ("InstanceNorm2d", (2, 3, 4, 5))]
UNBATCHED = [("InstanceNorm1d", (3, 7)), ("InstanceNorm2d", (3, 4, 5))]
OFF = {"affine": False, "track_running_stats": False}
FULL = {"affine": True, "track_running_stats": True}
SETTINGS = [OFF, {"affine": True}, {"track_running_stats": True}, FULL]
TOL = {"rtol": 1e-5, "atol": 1e-5}  # float32's tolerance, for float64 values


def paired(kata, cls, channels=3, **kwargs):
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


def normalized(x, eps=1e-5):
    """Each (sample, channel) of a batched x standardized over its positions."""
    dims = tuple(range(2, x.dim()))
    mean = x.mean(dims, keepdim=True)
    var = (x - mean).square().mean(dims, keepdim=True)
    return (x - mean) / (var + eps).sqrt()


def test_defaults(kata):
    """By default affine and track_running_stats are off: no parameters, no buffers, weight,
    bias and the running statistics are None; eps 1e-5, momentum 0.1, all kept as attributes."""
    for cls in CLASSES:
        layer = getattr(kata, cls)(5)
        assert layer.num_features == 5
        assert layer.eps == 1e-5 and layer.momentum == 0.1
        assert layer.affine is False and layer.track_running_stats is False
        assert list(layer.parameters()) == [] and dict(layer.named_buffers()) == {}
        assert layer.weight is None and layer.bias is None
        assert layer.running_mean is None and layer.running_var is None
        assert layer.num_batches_tracked is None
        kwargs = {"eps": 1e-3, "momentum": None, **FULL}
        layer = getattr(kata, cls)(7, **kwargs)
        assert layer.num_features == 7
        for name, value in kwargs.items():
            assert getattr(layer, name) == value, name


def test_parameters_and_buffers(kata):
    """affine=True: weight (ones) and bias (zeros), nn.Parameters of shape (C,);
    track_running_stats=True: buffers running_mean (zeros), running_var (ones) and
    num_batches_tracked (a 0-dim long 0)."""
    for cls in CLASSES:
        layer = getattr(kata, cls)(5, **FULL)
        assert sorted(n for n, _ in layer.named_parameters()) == ["bias", "weight"]
        assert isinstance(layer.weight, nn.Parameter) and isinstance(layer.bias, nn.Parameter)
        buffers = dict(layer.named_buffers())
        assert sorted(buffers) == ["num_batches_tracked", "running_mean", "running_var"]
        for name, want in getattr(nn, cls)(5, **FULL).state_dict().items():
            have = layer.state_dict()[name]
            assert have.dtype == want.dtype and have.shape == want.shape, name
            torch.testing.assert_close(have, want, rtol=0, atol=0)


def test_state_dict_round_trip(kata):
    """A state_dict loads from nn.InstanceNorm and back for every setting, with torch's keys,
    shapes and dtypes."""
    for cls in CLASSES:
        for kwargs in SETTINGS:
            mine, ref = paired(kata, cls, **kwargs)
            theirs, ours = ref.state_dict(), mine.state_dict()
            assert sorted(ours) == sorted(theirs)
            for key, value in theirs.items():
                assert ours[key].dtype == value.dtype, key
                torch.testing.assert_close(ours[key], value, rtol=0, atol=0)
            back = getattr(nn, cls)(3, **kwargs).double()
            back.load_state_dict(ours)


def test_to_moves_every_tensor(kata):
    """After .to(torch.float64) every floating tensor the layer holds is float64: no plain
    tensor attribute is left behind."""
    layer = kata.InstanceNorm2d(3, **FULL).to(torch.float64)
    for name, value in vars(layer).items():
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            assert value.dtype == torch.float64, name
    for name, value in layer.state_dict().items():
        if value.is_floating_point():
            assert value.dtype == torch.float64, name


def test_output_like_input(kata):
    """The output has the input's shape and dtype, batched or unbatched, in both modes."""
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        for cls, shape in [*SHAPES, *UNBATCHED]:
            for kwargs in (OFF, FULL):
                layer = getattr(kata, cls)(3, **kwargs).to(dtype)
                x = torch.randn(shape, dtype=dtype)
                for training in (True, False):
                    y = layer.train(training)(x.clone())
                    assert y.shape == x.shape and y.dtype == x.dtype


def test_each_sample_and_channel_by_formula(kata):
    """Each sample's channel is standardized over its own positions alone: mean and biased
    variance (divide by m) over L, or H and W, eps inside the root."""
    torch.manual_seed(1)
    for eps in (1e-5, 0.5):
        for cls, shape in SHAPES:
            layer = getattr(kata, cls)(3, eps=eps).double()
            x = torch.randn(shape, dtype=torch.float64)
            x = x * torch.rand(shape[:2] + (1,) * (len(shape) - 2), dtype=torch.float64) * 3 + 2
            torch.testing.assert_close(layer(x.clone()), normalized(x, eps), **TOL)


def test_matches_torch(kata):
    """Forward matches nn.InstanceNorm for every setting, in training and eval mode, batched
    and unbatched: the weight and bias per channel, running statistics in eval."""
    torch.manual_seed(2)
    cases = [*SHAPES, *UNBATCHED, ("InstanceNorm1d", (2, 3, 2))]
    for kwargs in SETTINGS:
        for cls, shape in cases:
            mine, ref = paired(kata, cls, eps=0.5, **kwargs)
            for training in (True, False):
                mine.train(training), ref.train(training)
                x = torch.randn(shape, dtype=torch.float64) * 3 + 1
                torch.testing.assert_close(mine(x.clone()), ref(x).detach(), **TOL)


def test_running_stats_follow_torch(kata):
    """Each training step folds in the batch's average of the sample means and of the
    unbiased sample variances: running = (1 - momentum) * running + momentum * that."""
    torch.manual_seed(3)
    for momentum in (0.1, 0.4):
        for cls, shape in [*SHAPES, ("InstanceNorm1d", (3, 7))]:
            mine, ref = paired(kata, cls, momentum=momentum, eps=0.5, **FULL)
            spatial = 1 if cls == "InstanceNorm1d" else 2
            per_sample = shape[:-spatial] + (1,) * spatial  # each sample's channels differ
            for step in range(2):
                x = torch.randn(shape, dtype=torch.float64) * (step + 1)
                x = x + 3 * torch.randn(per_sample, dtype=torch.float64)
                mine(x.clone())
                ref(x)
                torch.testing.assert_close(mine.running_mean, ref.running_mean, **TOL)
                torch.testing.assert_close(mine.running_var, ref.running_var, **TOL)
                assert int(mine.num_batches_tracked) == 0


def test_momentum_none_or_zero_freezes_running_stats(kata):
    """momentum None (as torch treats it) or 0.0: the running statistics stay 0 and 1."""
    torch.manual_seed(4)
    for momentum in (None, 0.0):
        for cls, shape in SHAPES:
            layer = getattr(kata, cls)(3, momentum=momentum, **FULL).double()
            layer(torch.randn(shape, dtype=torch.float64) * 2 + 3)
            torch.testing.assert_close(layer.running_mean, torch.zeros(3, dtype=torch.float64))
            torch.testing.assert_close(layer.running_var, torch.ones(3, dtype=torch.float64))


def test_eval_leaves_running_stats(kata):
    """Eval mode leaves running_mean, running_var and num_batches_tracked as they were."""
    torch.manual_seed(5)
    for cls, shape in SHAPES:
        mine, _ = paired(kata, cls, **FULL)
        before = [t.clone() for t in mine.buffers()]
        mine.eval()(torch.randn(shape, dtype=torch.float64) * 3 + 1)
        for have, want in zip(mine.buffers(), before, strict=True):
            torch.testing.assert_close(have, want, rtol=0, atol=0)


def test_eval_with_running_stats_by_formula(kata):
    """With running statistics, eval normalizes every sample with running_mean and
    running_var, eps inside the root, then applies weight and bias per channel."""
    torch.manual_seed(6)
    for cls, shape in SHAPES:
        mine, ref = paired(kata, cls, eps=0.5, **FULL)
        x = torch.randn(shape, dtype=torch.float64) * 2 + 1
        view = (1, 3) + (1,) * (x.dim() - 2)
        want = (x - ref.running_mean.view(view)) / (ref.running_var.view(view) + 0.5).sqrt()
        want = want * ref.weight.detach().view(view) + ref.bias.detach().view(view)
        torch.testing.assert_close(mine.eval()(x.clone()), want, **TOL)


def test_unbatched_is_a_batch_of_one(kata):
    """An unbatched sample (C, L) or (C, H, W) comes out as the batch of one would, with only
    the batch dim removed: a sample's own dims of size 1 stay."""
    torch.manual_seed(7)
    cases = [("InstanceNorm1d", 3, (3, 7)), ("InstanceNorm2d", 3, (3, 4, 5)),
             ("InstanceNorm1d", 1, (1, 5)), ("InstanceNorm2d", 3, (3, 1, 4))]  # fmt: skip
    for cls, channels, shape in cases:
        for kwargs in (OFF, FULL):
            mine, ref = paired(kata, cls, channels, **kwargs)
            for training in (True, False):
                mine.train(training), ref.train(training)
                x = torch.randn(shape, dtype=torch.float64) * 2 + 1
                y = mine(x.clone())
                assert y.shape == x.shape
                torch.testing.assert_close(y, ref(x.unsqueeze(0))[0].detach(), **TOL)
                if kwargs["track_running_stats"]:
                    torch.testing.assert_close(mine.running_mean, ref.running_mean, **TOL)
                    torch.testing.assert_close(mine.running_var, ref.running_var, **TOL)


def test_input_unmodified(kata):
    """The caller's input keeps its shape and values, batched or unbatched, in both modes."""
    torch.manual_seed(8)
    for cls, shape in [*SHAPES, *UNBATCHED]:
        for kwargs in (OFF, FULL):
            for training in (True, False):
                layer = getattr(kata, cls)(3, **kwargs).train(training)
                x = torch.randn(shape) * 2 + 1
                before = x.clone()
                layer(x)
                assert x.shape == before.shape
                torch.testing.assert_close(x, before, rtol=0, atol=0)


def test_gradients_match_torch(kata):
    """Gradients of the input, weight and bias match torch's in training and eval mode: with
    the input's statistics they flow through the mean and variance too."""
    torch.manual_seed(9)
    for cls, shape in SHAPES:
        for training in (True, False):
            mine, ref = paired(kata, cls, **FULL)
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
    """Running statistics are updated outside autograd: they never require grad."""
    torch.manual_seed(10)
    layer = kata.InstanceNorm2d(3, **FULL).double()
    for _ in range(2):
        x = torch.randn(2, 3, 3, 3, dtype=torch.float64, requires_grad=True)
        layer(x).sum().backward()
        for stat in (layer.running_mean, layer.running_var):
            assert not stat.requires_grad and stat.grad_fn is None


def test_numerically_stable(kata):
    """Stable in float32 for a large mean: the output for 1000 + x is the output for x (centre
    first, no E[x²] - E[x]² shortcut)."""
    torch.manual_seed(11)
    x = torch.randn(2, 3, 256)
    layer = kata.InstanceNorm1d(3)
    torch.testing.assert_close(layer(x + 1000), layer(x), rtol=0, atol=2e-3)


def test_computes_float64_in_float64(kata):
    """A float64 input is computed in float64, as torch does: its output matches torch's to
    float64 precision."""
    torch.manual_seed(12)
    for cls, shape in SHAPES:
        mine, ref = paired(kata, cls, **FULL)
        for training in (True, False):
            mine.train(training), ref.train(training)
            x = torch.randn(shape, dtype=torch.float64) * 3 + 1
            torch.testing.assert_close(mine(x.clone()), ref(x).detach(), rtol=1e-12, atol=1e-12)


def test_half_input(kata):
    """A float16 or bfloat16 input comes back in its dtype, from a float32 layer too, with
    statistics computed in float32: within 2 ulps of the exact result even far from zero."""
    torch.manual_seed(13)
    for dtype, offset in ((torch.float16, 384.0), (torch.bfloat16, 48.0)):
        x = (offset + torch.randn(2, 4, 64)).to(dtype)
        want = normalized(x.double())
        for layer_dtype in (torch.float32, dtype):
            layer = kata.InstanceNorm1d(4, **FULL).to(layer_dtype)
            y = layer(x.clone())
            assert y.dtype == dtype
            tol = 2 * torch.finfo(dtype).eps
            torch.testing.assert_close(y.double(), want.to(dtype).double(), rtol=tol, atol=tol)


def test_wrong_rank_raises(kata):
    """InstanceNorm1d takes 2D or 3D input and InstanceNorm2d 3D or 4D: any other rank raises
    ValueError naming the rank given."""
    cases = [("InstanceNorm1d", (3,)), ("InstanceNorm1d", (2, 3, 4, 5)),
             ("InstanceNorm2d", (3, 4)), ("InstanceNorm2d", (2, 3, 4, 5, 2))]  # fmt: skip
    for cls, shape in cases:
        for training in (True, False):
            layer = getattr(kata, cls)(3).train(training)
            with pytest.raises(ValueError, match=f"got {len(shape)}D input"):
                layer(torch.randn(shape))


def test_single_position_raises(kata):
    """One position per channel (L = 1, or H·W = 1) raises ValueError where the input's own
    statistics are needed; eval with running statistics, or H·W = 4 with W = 1, works."""
    torch.manual_seed(14)
    for cls, shape, kwargs, training in (
        ("InstanceNorm1d", (2, 3, 1), {}, True),
        ("InstanceNorm1d", (3, 1), {}, True),
        ("InstanceNorm2d", (2, 3, 1, 1), FULL, True),
        ("InstanceNorm2d", (2, 3, 1, 1), {}, False),
    ):
        layer = getattr(kata, cls)(3, **kwargs).train(training)
        with pytest.raises(ValueError, match="spatial element"):
            layer(torch.randn(shape))
    for cls, shape, kwargs, training in (
        ("InstanceNorm2d", (2, 3, 1, 1), FULL, False),
        ("InstanceNorm2d", (2, 3, 4, 1), {}, True),
        ("InstanceNorm1d", (2, 3, 2), FULL, True),
    ):
        mine, ref = paired(kata, cls, **kwargs)
        mine.train(training), ref.train(training)
        x = torch.randn(shape, dtype=torch.float64)
        torch.testing.assert_close(mine(x.clone()), ref(x).detach(), **TOL)


def warned(layer, x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = layer(x)
    return y, [w for w in caught if issubclass(w.category, UserWarning)]


def test_num_features_mismatch(kata):
    """A channel dim unlike num_features raises ValueError with affine; without it, a
    UserWarning and torch's output; when they match, no warning."""
    torch.manual_seed(15)
    for cls, shape in [*SHAPES, *UNBATCHED]:
        x = torch.randn(shape, dtype=torch.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError):
                getattr(kata, cls)(4, affine=True).double()(x.clone())
            want = getattr(nn, cls)(4).double()(x)
        y, caught = warned(getattr(kata, cls)(4).double(), x.clone())
        assert caught, "no UserWarning for 3 channels and num_features=4"
        torch.testing.assert_close(y, want, **TOL)
        for kwargs in (OFF, FULL):
            for training in (True, False):
                layer = getattr(kata, cls)(3, **kwargs).double().train(training)
                _, caught = warned(layer, x.clone())
                assert not caught, [str(w.message) for w in caught]
