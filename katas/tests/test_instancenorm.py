"""Your tests of InstanceNorm1d/2d: pass every correct layer, fail every wrong one.

"How would you verify that your InstanceNorm is correct?" is the interviewer's next question.
Here you answer it in code. The grader runs this file against many InstanceNorms: the
reference, correct ones written in other ways, and the mistakes candidates make in interviews
(with small changes to the reference as the stretch). Every test must pass on every correct
layer; each wrong layer must fail at least one test. The report names the mistakes your tests
miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.InstanceNorm1d` and
`kata.InstanceNorm2d` are the classes, with torch.nn.InstanceNorm1d/2d's signature
(num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False;
katas/instancenorm.py states the contract). The grader calls each test once for each layer.
Use torch and pytest: torch.testing.assert_close, pytest.raises, and torch's own
nn.InstanceNorm1d/2d as a reference where it helps (a layer's state_dict loads into the other).

Test behaviour: values, gradients, the state_dict, dtypes, train and eval, errors. How the layer
is written (no built-in layer, no Python loop) is the grader's to watch, not your tests'.

Where to look
-------------
- the defaults: affine and track_running_stats both off, unlike BatchNorm;
- the formula: each sample's channel on its own, over L or H and W only (not over the batch,
  not over the channels), the biased variance, eps inside the root, weight and bias per channel;
- the running statistics, when tracked: the batch's average of the sample means and of the
  unbiased sample variances, which way momentum weighs, eval mode normalizing with them and
  leaving them as they were; without them, eval uses the input's own statistics;
- the parameters and buffers: names, shapes, dtypes and first values, as a checkpoint of
  nn.InstanceNorm has them for each setting, and a .to(float64) that moves every tensor;
- unbatched inputs, (C, L) and (C, H, W): a batch of one, with only the batch dim removed,
  and the caller's tensor left with its shape and values;
- inputs that show a mistake: samples whose means differ, a large mean in float32, a large
  eps, the gradients, running statistics outside autograd; then torch's parity: float64 kept
  in float64, half inputs, momentum None, errors and the num_features warning.

Grade yourself with::

    nox -s kata-instancenorm -- --tests
"""

import torch


def test_each_sample_channel_has_mean_zero_and_variance_one(kata):
    """Each sample's channel is centred and scaled to variance 1 over its own positions."""
    torch.manual_seed(0)
    x = torch.randn(4, 3, 8, dtype=torch.float64) * 3 + torch.randn(4, 3, 1, dtype=torch.float64)
    y = kata.InstanceNorm1d(3).double()(x)
    zeros = torch.zeros(4, 3, dtype=torch.float64)
    ones = torch.ones(4, 3, dtype=torch.float64)
    torch.testing.assert_close(y.mean(-1), zeros, atol=1e-7, rtol=0)
    torch.testing.assert_close(y.var(-1, unbiased=False), ones, atol=1e-4, rtol=0)
