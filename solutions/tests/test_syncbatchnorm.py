"""The reference tests of SyncBatchNorm: what a correct layer does, property by property.

Each test takes the module under test as `kata`. The tests of one process come first: the
constructor's arguments, the parameters and buffers a checkpoint of nn.SyncBatchNorm holds, and
BatchNorm's behaviour where there is no process group (nor torch.distributed at all). Then the
tests on ranks: each runs the layer on the ranks of a process group through the `ranks` fixture
(ranks(step, world_size) runs step(rank, world_size) on each rank, a process forked from the
test's, and returns what each returned) and compares every rank's output, gradients and
running statistics with BatchNorm on the global batch, the ranks' batches concatenated,
computed in float64 by torch.nn.functional.batch_norm. The ranks' batches differ in mean, in
spread and in size, so that every statistic that is not the global one shows. Values are
compared in float64 at a tolerance that also accepts a layer computing in float32.
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

TOL = {"rtol": 1e-5, "atol": 1e-5}  # float32's tolerance, for float64 values
STATS = ("running_mean", "running_var", "num_batches_tracked")
# Each rank's batch is shifted by its own per-channel mean (rank r: row r) and scaled by its own
# spread, so that a rank's statistics are never the global ones.
SHIFTS = [[-3.0, 1.0, 0.5], [-1.0, 2.0, -2.0], [2.0, -1.0, 3.0], [4.0, 0.0, -1.0]]
SPREADS = [0.5, 1.0, 2.0, 3.0]


def batches(sizes, *shape, seed=0):
    """One float64 batch per rank: rank r holds sizes[r] samples of shape `shape` (C first),
    with its own per-channel mean and spread."""
    torch.manual_seed(seed)
    channels = shape[0]
    view = (1, channels) + (1,) * (len(shape) - 1)
    xs = []
    for r, n in enumerate(sizes):
        mean = torch.tensor([SHIFTS[r % 4][c % 3] for c in range(channels)], dtype=torch.float64)
        x = torch.randn(n, *shape, dtype=torch.float64) * SPREADS[r % 4] + mean.view(view)
        xs.append(x)
    return xs


def like(xs, seed=1):
    """An upstream gradient for each rank's output."""
    torch.manual_seed(seed)
    return [torch.randn_like(x) for x in xs]


def random_state(channels, *, affine=True, tracked=True, seed=2):
    """A state_dict of nn.BatchNorm with a random weight, bias and running statistics (the
    first ones and zeros would hide a weight or bias used the wrong way, or momentum)."""
    ref = nn.BatchNorm1d(channels, affine=affine, track_running_stats=tracked)
    torch.manual_seed(seed)
    with torch.no_grad():
        if affine:
            ref.weight.uniform_(0.5, 2.0)
            ref.bias.uniform_(-1.0, 1.0)
        if tracked:
            ref.running_mean.uniform_(-1.0, 1.0)
            ref.running_var.uniform_(0.5, 3.0)
    return {k: v.clone() for k, v in ref.state_dict().items()}


def run(kata, ranks, channels, steps, *, kwargs=None, state=None, groups=None, world_size=None):
    """Your SyncBatchNorm(channels, **kwargs) on the ranks, in float64, loaded with `state`,
    through `steps`: each a dict with xs (rank r's input, or None: that rank sits the step out),
    train (the mode) and dys (upstream gradients for backward, or None). groups: lists of
    ranks, each made a process group (by every rank, in order), the layer of a rank in one
    given it as process_group. For each rank, a record per step it took part in: y, grad_x,
    grad_weight, grad_bias and the buffers after the step."""
    kwargs = kwargs or {}
    world_size = world_size or len(steps[0]["xs"])

    def step(rank, size):
        group = None
        for members in groups or ():
            made = dist.new_group(members)
            if rank in members:
                group = made
        layer = kata.SyncBatchNorm(channels, process_group=group, **kwargs)
        if state is not None:
            layer.load_state_dict(state)
        layer = layer.double()
        records = []
        for s in steps:
            if s["xs"][rank] is None:
                continue
            layer.train(s["train"])
            dys = s.get("dys")
            x = s["xs"][rank].clone().requires_grad_(dys is not None)
            layer.zero_grad(set_to_none=True)
            y = layer(x)
            record = {"y": y}
            if dys is not None:
                y.backward(dys[rank])
                record["grad_x"] = x.grad
                for name in ("weight", "bias"):
                    p = getattr(layer, name, None)
                    record[f"grad_{name}"] = None if p is None else p.grad
            for name in STATS:
                value = getattr(layer, name, None)
                record[name] = value.clone() if isinstance(value, torch.Tensor) else value
            records.append(record)
        return records

    return ranks(step, world_size=world_size)


def reference(channels, steps, members, *, kwargs=None, state=None):
    """BatchNorm over the global batch of the ranks `members`, by torch in float64: for each
    member, a record per step like run's. Training normalizes every rank with the global
    statistics and updates the running ones with them; eval normalizes each rank alone, with
    the running statistics (or, without them, its own batch's)."""
    kwargs = kwargs or {}
    eps, momentum = kwargs.get("eps", 1e-5), kwargs.get("momentum", 0.1)
    affine, tracked = kwargs.get("affine", True), kwargs.get("track_running_stats", True)
    if state is None:  # a fresh layer's
        state = nn.BatchNorm1d(channels, affine=affine, track_running_stats=tracked).state_dict()
    weight = state["weight"].double() if affine else None
    bias = state["bias"].double() if affine else None
    mean = state["running_mean"].double().clone() if tracked else None
    var = state["running_var"].double().clone() if tracked else None
    count = 0
    out = {r: [] for r in members}
    for s in steps:
        here = [r for r in members if s["xs"][r] is not None]
        parts = [s["xs"][r] for r in here]
        dims = [0, *range(2, parts[0].dim())]
        if s["train"]:
            m = 0.0
            if tracked:
                count += 1
                m = 1.0 / count if momentum is None else momentum
            x = torch.cat(parts).requires_grad_()
            w = None if weight is None else weight.clone().requires_grad_()
            b = None if bias is None else bias.clone().requires_grad_()
            y = F.batch_norm(x, mean, var, w, b, training=True, momentum=m, eps=eps)
            sizes = [p.size(0) for p in parts]
            records = [{"y": part.detach()} for part in y.split(sizes)]
            if s.get("dys") is not None:
                dy = torch.cat([s["dys"][r] for r in here])
                y.backward(dy)
                x_hat = F.batch_norm(x.detach(), None, None, training=True, eps=eps)
                split = (x.grad.split(sizes), x_hat.split(sizes), dy.split(sizes))
                for record, gx, xh, g in zip(records, *split, strict=True):
                    record["grad_x"] = gx
                    # Each rank's own share: DDP sums them over the ranks afterwards.
                    record["grad_weight"] = (g * xh).sum(dims) if affine else None
                    record["grad_bias"] = g.sum(dims) if affine else None
        else:
            records = [
                {"y": F.batch_norm(p, mean, var, weight, bias, training=not tracked, eps=eps)}
                for p in parts
            ]
        for r, record in zip(here, records, strict=True):
            record.update(running_mean=mean, running_var=var)
            record["num_batches_tracked"] = torch.tensor(count) if tracked else None
            out[r].append({k: v.clone() if isinstance(v, torch.Tensor) else v
                           for k, v in record.items()})  # fmt: skip
    return out


def close(have, want, what):
    """have is a tensor equal to want, at float32's tolerance; the message says what it is."""
    assert isinstance(have, torch.Tensor), f"{what}: {have!r}, not a tensor"
    torch.testing.assert_close(have, want, **TOL, msg=lambda m: f"{what}: {m}")


def expect_like_reference(have, want):
    """Every rank's records (run's) equal the reference's, step by step."""
    for r in want:
        assert len(have[r]) == len(want[r]), f"rank {r}"
        for k, (mine, theirs) in enumerate(zip(have[r], want[r], strict=True)):
            where = f"rank {r}, step {k + 1}"
            close(mine["y"], theirs["y"], f"{where}: y")
            grads = [n for n in ("grad_x", "grad_weight", "grad_bias") if n in theirs]
            for name in [*grads, "running_mean", "running_var"]:
                if theirs[name] is None:
                    assert mine[name] is None, f"{where}: {name} should be None"
                else:
                    close(mine[name], theirs[name], f"{where}: {name}")
            if theirs["num_batches_tracked"] is None:
                assert mine["num_batches_tracked"] is None, where
            else:
                assert int(mine["num_batches_tracked"]) == int(theirs["num_batches_tracked"]), where


def check(kata, ranks, channels, steps, *, kwargs=None, state=None):
    """Run the steps on every rank of the default group and compare with the reference."""
    world = len(steps[0]["xs"])
    have = run(kata, ranks, channels, steps, kwargs=kwargs, state=state)
    want = reference(channels, steps, range(world), kwargs=kwargs, state=state)
    expect_like_reference(dict(enumerate(have)), want)


# -- one process: the constructor, parameters, buffers, and BatchNorm without a group --------


def test_constructor_arguments(kata):
    """The constructor's arguments are kept as attributes, with torch's defaults."""
    layer = kata.SyncBatchNorm(5)
    assert layer.num_features == 5
    assert layer.eps == 1e-5
    assert layer.momentum == 0.1
    assert layer.affine is True
    assert layer.track_running_stats is True
    assert layer.process_group is None
    kwargs = {"eps": 1e-3, "momentum": None, "affine": False, "track_running_stats": False}
    layer = kata.SyncBatchNorm(7, **kwargs)
    assert layer.num_features == 7
    for name, value in kwargs.items():
        assert getattr(layer, name) == value, name


def test_parameters(kata):
    """weight and bias are nn.Parameters of shape (C,), starting at ones and zeros; with
    affine=False there are none, and both are None."""
    layer = kata.SyncBatchNorm(5)
    assert sorted(dict(layer.named_parameters())) == ["bias", "weight"]
    assert isinstance(layer.weight, nn.Parameter) and isinstance(layer.bias, nn.Parameter)
    torch.testing.assert_close(layer.weight.detach(), torch.ones(5), rtol=0, atol=0)
    torch.testing.assert_close(layer.bias.detach(), torch.zeros(5), rtol=0, atol=0)
    layer = kata.SyncBatchNorm(5, affine=False)
    assert list(layer.parameters()) == []
    assert layer.weight is None and layer.bias is None


def test_buffers(kata):
    """running_mean (zeros), running_var (ones) and num_batches_tracked (a 0-dim long 0) are
    buffers, as in a fresh nn.SyncBatchNorm; with track_running_stats=False all three are None
    and there are no buffers."""
    layer, ref = kata.SyncBatchNorm(5), nn.SyncBatchNorm(5)
    buffers = dict(layer.named_buffers())
    assert sorted(buffers) == sorted(STATS)
    for name, want in ref.named_buffers():
        assert buffers[name].dtype == want.dtype, name
        torch.testing.assert_close(buffers[name], want, rtol=0, atol=0)
    assert buffers["num_batches_tracked"].dim() == 0
    layer = kata.SyncBatchNorm(5, track_running_stats=False)
    assert dict(layer.named_buffers()) == {}
    for name in STATS:
        assert getattr(layer, name) is None, name


def test_state_dict_round_trip(kata):
    """A state_dict loads from nn.SyncBatchNorm and nn.BatchNorm2d and back (strict), with
    torch's keys, for the default layer, affine=False and track_running_stats=False."""
    for kwargs in ({}, {"affine": False}, {"track_running_stats": False}):
        for cls in (nn.SyncBatchNorm, nn.BatchNorm2d):
            state = random_state(3, affine=kwargs.get("affine", True),
                                 tracked=kwargs.get("track_running_stats", True))  # fmt: skip
            if "num_batches_tracked" in state:
                state["num_batches_tracked"] = torch.tensor(7)
            mine = kata.SyncBatchNorm(3, **kwargs)
            assert sorted(mine.state_dict()) == sorted(cls(3, **kwargs).state_dict())
            mine.load_state_dict(state)
            back = cls(3, **kwargs)
            back.load_state_dict(mine.state_dict())
            for name, value in state.items():
                torch.testing.assert_close(back.state_dict()[name], value, rtol=0, atol=0)


ONE_PROCESS_SHAPES = [(6, 4), (5, 4, 7), (3, 4, 5, 6), (2, 4, 3, 2, 2)]


def test_one_process_is_batchnorm(kata):
    """Without a process group (one process, as in a notebook) it is BatchNorm, for (N, C, *)
    inputs: two training steps then eval, outputs and running statistics as F.batch_norm's."""
    for kwargs in ({}, {"momentum": 0.3}):
        for shape in ONE_PROCESS_SHAPES:
            state = random_state(4)
            mine = kata.SyncBatchNorm(4, **kwargs)
            mine.load_state_dict(state)
            mine = mine.double()
            mean, var = state["running_mean"].double(), state["running_var"].double()
            weight, bias = state["weight"].double(), state["bias"].double()
            torch.manual_seed(3)
            for k, training in enumerate((True, True, False)):
                x = torch.randn(shape, dtype=torch.float64) * (k + 1) + k - 1
                want = F.batch_norm(x, mean, var, weight, bias, training=training,
                                    momentum=kwargs.get("momentum", 0.1))  # fmt: skip
                y = mine.train(training)(x.clone())
                torch.testing.assert_close(y, want, **TOL)
                torch.testing.assert_close(mine.running_mean, mean, **TOL)
                torch.testing.assert_close(mine.running_var, var, **TOL)
            assert int(mine.num_batches_tracked) == 2


def test_one_process_without_running_stats(kata):
    """track_running_stats=False on one process: the batch's own statistics in training and in
    eval."""
    torch.manual_seed(4)
    for shape in ONE_PROCESS_SHAPES:
        state = random_state(4, tracked=False)
        mine = kata.SyncBatchNorm(4, track_running_stats=False)
        mine.load_state_dict(state)
        mine = mine.double()
        for training in (True, False):
            x = torch.randn(shape, dtype=torch.float64) * 2 + 1
            want = F.batch_norm(x, None, None, state["weight"].double(), state["bias"].double(),
                                training=True)  # fmt: skip
            torch.testing.assert_close(mine.train(training)(x), want, **TOL)


def test_one_process_running_stats_carry_no_graph(kata):
    """Training on an input that requires grad leaves the running statistics outside
    autograd's graph, and the input's gradient is BatchNorm's."""
    torch.manual_seed(5)
    for shape in ((6, 4), (3, 4, 5, 6)):
        state = random_state(4)
        mine = kata.SyncBatchNorm(4)
        mine.load_state_dict(state)
        mine = mine.double()
        x = (torch.randn(shape, dtype=torch.float64) * 2 + 1).requires_grad_()
        y = mine(x)
        for name in ("running_mean", "running_var"):
            value = getattr(mine, name)
            assert not value.requires_grad and value.grad_fn is None, name
        dy = torch.randn_like(y)
        y.backward(dy)
        x2 = x.detach().clone().requires_grad_()
        F.batch_norm(x2, None, None, state["weight"].double(), state["bias"].double(),
                     training=True).backward(dy)  # fmt: skip
        torch.testing.assert_close(x.grad, x2.grad, **TOL)


def test_without_torch_distributed(kata, monkeypatch):
    """On a torch built without torch.distributed (is_available() False, no is_initialized
    nor get_world_size), it works as BatchNorm."""
    monkeypatch.setattr(dist, "is_available", lambda: False)
    for name in ("is_initialized", "get_world_size", "get_rank"):
        monkeypatch.delattr(dist, name, raising=False)
    torch.manual_seed(6)
    mine = kata.SyncBatchNorm(3).double()
    x = torch.randn(5, 3, 4, dtype=torch.float64) * 2 + 1
    torch.testing.assert_close(mine(x), F.batch_norm(x, None, None, training=True), **TOL)


def test_one_process_eps_inside_sqrt(kata):
    """eps goes inside the square root: a constant channel gives the bias with the default eps
    (not NaN), and eps=0.5 shows where it is added, in training and eval."""
    torch.manual_seed(7)
    for eps in (1e-5, 0.5):
        state = random_state(3)
        mine = kata.SyncBatchNorm(3, eps=eps)
        mine.load_state_dict(state)
        mine = mine.double()
        mean, var = state["running_mean"].double(), state["running_var"].double()
        w, b = state["weight"].double(), state["bias"].double()
        for training in (True, False):
            x = torch.randn(6, 3, 4, dtype=torch.float64)
            x[:, 0] = 2.0
            want = F.batch_norm(x, mean, var, w, b, training=training, eps=eps)
            torch.testing.assert_close(mine.train(training)(x), want, **TOL)


def test_one_process_momentum_none(kata):
    """momentum=None: the running statistics are the plain average of the batches' ones."""
    torch.manual_seed(8)
    mine = kata.SyncBatchNorm(3, momentum=None).double()
    means, variances = [], []
    for _ in range(3):
        x = torch.randn(8, 3, 2, dtype=torch.float64) * 3 + torch.randn(1, 3, 1) * 2
        mine(x)
        means.append(x.mean((0, 2)))
        variances.append(x.var((0, 2), unbiased=True))
    torch.testing.assert_close(mine.running_mean, torch.stack(means).mean(0), **TOL)
    torch.testing.assert_close(mine.running_var, torch.stack(variances).mean(0), **TOL)


# -- on the ranks of a process group ---------------------------------------------------------


def test_global_statistics(kata, ranks):
    """Four ranks with batches of the same size but different means and spreads: every rank
    normalizes with the global batch's mean and biased variance (the spread of the rank means
    included), and updates its running statistics with them."""
    xs = batches((4, 4, 4, 4), 3, 5)
    check(kata, ranks, 3, [{"xs": xs, "train": True}], state=random_state(3))


def test_two_ranks(kata, ranks):
    """Two ranks, the smallest group that synchronises, with backward."""
    xs = batches((3, 5), 3, 4)
    check(kata, ranks, 3, [{"xs": xs, "train": True, "dys": like(xs)}], state=random_state(3))


def test_uneven_batch_sizes(kata, ranks):
    """Ranks with 7, 2, 4 and 3 samples: each weighs by its count in the global statistics."""
    xs = batches((7, 2, 4, 3), 3, 4)
    check(kata, ranks, 3, [{"xs": xs, "train": True}], state=random_state(3))


def test_running_stats_on_every_rank(kata, ranks):
    """Two training steps on uneven batches: every rank's running_mean and running_var follow
    the global batch (running_var unbiased with the global count), num_batches_tracked counts
    them, the same on every rank."""
    steps = [{"xs": batches((6, 2, 3, 5), 3, seed=s), "train": True} for s in (0, 1)]
    check(kata, ranks, 3, steps, state=random_state(3))
    check(kata, ranks, 3, steps, kwargs={"momentum": 0.6}, state=random_state(3))


def test_input_gradients(kata, ranks):
    """The input's gradient on every rank is that of BatchNorm on the global batch, whose
    statistics depend on every rank's input."""
    xs = batches((5, 3, 4, 2), 3, 4)
    check(kata, ranks, 3, [{"xs": xs, "train": True, "dys": like(xs)}], state=random_state(3))


def test_parameter_gradients_are_local(kata, ranks):
    """weight.grad and bias.grad are each rank's own share (DDP sums them afterwards), not
    their sum over the ranks."""
    xs = batches((5, 3, 4, 2), 3, 4, seed=3)
    dys = like(xs, seed=4)
    have = run(kata, ranks, 3, [{"xs": xs, "train": True, "dys": dys}], state=random_state(3))
    want = reference(3, [{"xs": xs, "train": True, "dys": dys}], range(4), state=random_state(3))
    for r in range(4):
        for name in ("grad_weight", "grad_bias"):
            assert have[r][0][name] is not None, f"rank {r}: {name}"
            torch.testing.assert_close(have[r][0][name], want[r][0][name], **TOL)


def test_input_shapes(kata, ranks):
    """(N, C), (N, C, L), (N, C, H, W) and (N, C, D, H, W) on the ranks, with backward and
    then eval: the statistics are per channel, over every dim but dim 1."""
    for shape in ((4,), (4, 3), (4, 3, 2), (4, 2, 3, 2)):
        xs = batches((3, 2, 4), *shape, seed=len(shape))
        steps = [
            {"xs": xs, "train": True, "dys": like(xs)},
            {"xs": batches((2, 3, 1), *shape, seed=9), "train": False},
        ]
        check(kata, ranks, 4, steps, state=random_state(4))


def test_rank_with_batch_of_one(kata, ranks):
    """A rank with a single sample (one value per channel) is no error: it joins the global
    batch, whose statistics come from every rank."""
    xs = batches((5, 1, 3, 1), 3)
    check(kata, ranks, 3, [{"xs": xs, "train": True, "dys": like(xs)}], state=random_state(3))


def test_rank_with_empty_batch(kata, ranks):
    """A rank with no sample joins the collectives, returns an empty output and updates its
    running statistics with the global ones; the others are unaffected."""
    steps = []
    for seed in (0, 1):
        xs = batches((4, 0, 5, 3), 3, 4, seed=seed)
        steps.append({"xs": xs, "train": True, "dys": like(xs)})
    check(kata, ranks, 3, steps, state=random_state(3))


def test_affine_false(kata, ranks):
    """affine=False on the ranks: the output is x̂ and the input's gradient still crosses
    ranks."""
    xs = batches((3, 4, 2), 3, 5)
    steps = [{"xs": xs, "train": True, "dys": like(xs)}, {"xs": xs, "train": False}]
    check(kata, ranks, 3, steps, kwargs={"affine": False},
          state=random_state(3, affine=False))  # fmt: skip


def test_eps_on_the_ranks(kata, ranks):
    """eps inside the square root on the ranks: eps=0.5 against variances near one, and a
    constant channel (variance 0) with the default eps."""
    for kwargs in ({"eps": 0.5}, {}):
        xs = batches((3, 4, 2), 3, 5, seed=5)
        for x in xs:
            x[:, 0] = 2.0
        steps = [{"xs": xs, "train": True, "dys": like(xs)}, {"xs": xs, "train": False}]
        check(kata, ranks, 3, steps, kwargs=kwargs, state=random_state(3))


def test_eval_mode(kata, ranks):
    """Eval on the ranks: each rank normalizes with the running statistics, alone; they and
    num_batches_tracked stay as they were."""
    xs = batches((5, 3, 2, 4), 3, 4)
    steps = [{"xs": xs, "train": False}, {"xs": xs, "train": True}, {"xs": xs, "train": False}]
    check(kata, ranks, 3, steps, state=random_state(3))


def test_momentum_none(kata, ranks):
    """momentum=None on the ranks: the running statistics are the plain average of the global
    batches' ones, factor 1 / num_batches_tracked."""
    steps = [{"xs": batches((4, 2, 3, 5), 3, seed=s), "train": True} for s in range(3)]
    check(kata, ranks, 3, steps, kwargs={"momentum": None}, state=random_state(3))


def test_track_running_stats_false(kata, ranks):
    """track_running_stats=False: synchronised in training, each rank's own batch statistics
    in eval; no buffers to update."""
    xs = batches((4, 3, 5, 2), 3, 4)
    steps = [{"xs": xs, "train": True, "dys": like(xs)}, {"xs": xs, "train": False}]
    check(kata, ranks, 3, steps, kwargs={"track_running_stats": False},
          state=random_state(3, tracked=False))  # fmt: skip


def test_process_group(kata, ranks):
    """process_group: the pairs [0, 1] and [2, 3] synchronise apart, forward and backward,
    then the three ranks [1, 2, 3] without rank 0."""
    xs = batches((4, 3, 5, 2), 3, 4)
    dys = like(xs)
    # Backward in the pair [0, 1] only: torch.distributed.nn.functional.all_gather's backward on
    # gloo takes a group's rank i for the global rank i, and fails in the pair [2, 3].
    pairs = {
        (0, 1): [{"xs": [xs[0], xs[1], None, None], "train": True, "dys": dys}],
        (2, 3): [{"xs": [None, None, xs[2], xs[3]], "train": True}],
    }
    steps = [pairs[(0, 1)][0], pairs[(2, 3)][0]]  # each rank takes the one step it has data in
    have = run(kata, ranks, 3, steps, groups=[[0, 1], [2, 3]], state=random_state(3))
    for members, step in pairs.items():
        want = reference(3, step, members, state=random_state(3))
        expect_like_reference({r: have[r] for r in members}, want)
    step = [{"xs": [None, *batches((3, 2, 4), 3, 2, seed=6)], "train": True}]
    have = run(kata, ranks, 3, step, groups=[[1, 2, 3]], state=random_state(3))
    want = reference(3, step, (1, 2, 3), state=random_state(3))
    expect_like_reference({r: have[r] for r in (1, 2, 3)}, want)
    assert have[0] == []


def test_float32_and_float64(kata, ranks):
    """A float32 layer given float32 returns float32, a float64 one float64, on one process
    and on the ranks."""
    torch.manual_seed(10)
    for dtype in (torch.float32, torch.float64):
        x = torch.randn(4, 3, 2, dtype=dtype)
        assert kata.SyncBatchNorm(3).to(dtype)(x).dtype == dtype

        def step(rank, size, dtype=dtype, x=x):
            return kata.SyncBatchNorm(3).to(dtype)(x + rank)

        for y in ranks(step, world_size=2):
            assert y.dtype == dtype
