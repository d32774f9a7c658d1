"""Your tests of SyncBatchNorm: pass every correct layer, fail every wrong one.

"How would you verify that your SyncBatchNorm is correct?" is the interviewer's next question.
Here you answer it in code. The grader runs this file against many SyncBatchNorms: the
reference, correct ones written in other ways, and the mistakes candidates make in interviews
(with small changes to the reference as the stretch). Every test must pass on every correct
layer; each wrong layer must fail at least one test. The report names the mistakes your tests
miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.SyncBatchNorm` is the class,
with torch.nn.SyncBatchNorm's signature, SyncBatchNorm(num_features, eps=1e-5, momentum=0.1,
affine=True, track_running_stats=True, process_group=None) (katas/syncbatchnorm.py states the
contract). The grader calls each test once for each layer. Use torch and pytest:
torch.testing.assert_close, pytest.raises, and torch.nn.functional.batch_norm on the global
batch (every rank's batch concatenated, in float64) as the reference. A plain test runs in one
process, with no process group: there SyncBatchNorm is plain BatchNorm.

How a test gets ranks
---------------------
A test that also takes the argument `ranks` can run a function on the ranks of a process group:

    outs = ranks(step, world_size=2)

runs step(rank, world_size) on each of world_size ranks (1 to 8) and returns what each
returned, as a list in rank order. Each rank is a process forked from your test's, already in
the default process group (gloo, initialised for you): step can be a closure over your test's
tensors and `kata`, and make the layer itself (nothing is pickled but what it returns). A
tensor returned comes back detached, so compute gradients inside step (y.backward(dy[rank]),
then return x.grad, layer.weight.grad). Ranks may hold batches of different sizes; a process
group other than the default one is made inside step, by every rank, with
torch.distributed.new_group(ranks). A rank that raises fails the call with its error and line,
and ranks left waiting in a collective that not every rank joined fail it as hung within a few
seconds. A call takes tens of milliseconds: use as many as you like.

Test behaviour: values, gradients, the state_dict, dtypes, train and eval, errors, and a call
that hangs. How the layer is written (no built-in norm, no Python loop, what it sends over the
wire) is the grader's to watch, not your tests'.

Where to look
-------------
- the global batch: its mean and biased variance per channel, over every dim but dim 1, from
  ranks whose batches differ in mean, in spread and in size (one sample on a rank too);
- the gradients: the input's on every rank against torch autograd on the global batch, and
  weight's and bias's as each rank's own share (DDP sums them afterwards);
- the running statistics: on every rank, with the global count's unbiased variance;
  momentum (None too); eval mode, which uses them alone on each rank;
- the options: eps inside the root (a constant channel), affine=False,
  track_running_stats=False, process_group (some ranks only; run backward in a group that
  holds rank 0: torch's own differentiable all_gather, which a correct layer may use, fails
  backward in a group without global rank 0 on gloo, a bug of torch's);
- one process: no process group, and a torch without torch.distributed
  (dist.is_available() False): plain BatchNorm, in training and eval;
- the parameters and buffers: names, shapes and first values, as a checkpoint of
  nn.SyncBatchNorm has them.

Grade yourself with::

    nox -s kata-syncbatchnorm -- --tests
"""

import torch


def test_global_batch_has_mean_zero_and_variance_one(kata, ranks):
    """In training mode on two ranks, with weight 1 and bias 0 (their first values), the
    outputs of both ranks together are centred and scaled to variance 1 per channel, with the
    global batch's statistics: rank 0's batch lies above the global mean, and so does its
    output (normalized with its own statistics, it would be centred on its own)."""
    torch.manual_seed(0)
    xs = [
        torch.randn(4, 3, dtype=torch.float64) + 3,
        torch.randn(6, 3, dtype=torch.float64) * 2 - 1,
    ]

    def step(rank, world_size):
        layer = kata.SyncBatchNorm(3).double()
        return layer(xs[rank])

    ys = ranks(step, world_size=2)
    y = torch.cat(ys)
    zeros, ones = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    torch.testing.assert_close(y.mean(0), zeros, atol=1e-7, rtol=0)
    torch.testing.assert_close(y.var(0, unbiased=False), ones, atol=1e-4, rtol=0)
    assert (ys[0].mean(0) > 0.5).all()
