"""Your tests of BatchNorm1d/2d: pass every correct layer, fail every wrong one.

"How would you verify that your BatchNorm is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many BatchNorms: the reference, correct
ones written in other ways, and the mistakes candidates make in interviews (with small changes
to the reference as the stretch). Every test must pass on every correct layer; each wrong layer
must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.BatchNorm1d` and
`kata.BatchNorm2d` are the classes, with torch.nn.BatchNorm1d/2d's signature
(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True;
katas/batchnorm.py states the contract). The grader calls each test once for each layer. Use
torch and pytest: torch.testing.assert_close, pytest.raises, and torch's own nn.BatchNorm1d/2d
as a reference where it helps (a layer's state_dict loads into the other).

Test behaviour: values, gradients, the state_dict, dtypes, train and eval, errors. How the layer
is written (no built-in layer, no Python loop) is the grader's to watch, not your tests'.

Where to look
-------------
- the formula in training: per channel, over every dim but dim 1 (N, then L or H and W), the
  mean and the biased variance, eps inside the root, then weight and bias per channel;
- the running statistics: their first values, which way momentum weighs the new batch, the
  unbiased variance without eps, num_batches_tracked as a long counter, momentum=None and 0.0;
- eval mode: it normalizes with the running statistics and leaves them as they were;
- the parameters and buffers: names, shapes, dtypes and first values, as a checkpoint of
  nn.BatchNorm has them, and a .to(float64) that moves every tensor the layer holds;
- the options: affine=False, track_running_stats=False, a large eps;
- inputs that show a mistake: (N, C, L) and (N, C, H, W) as well as (N, C), a small batch, a
  large mean in float32, the input left as it was, the gradients, running statistics that
  stay outside autograd, errors for a wrong rank or one value per channel, an empty batch, a
  float16 input to a float32 layer.

Grade yourself with::

    nox -s kata-batchnorm -- --tests
"""

import torch


def test_each_channel_has_mean_zero_and_variance_one(kata):
    """In training mode, with weight 1 and bias 0 (their first values), each channel is
    centred and scaled to variance 1 over the batch."""
    torch.manual_seed(0)
    x = torch.randn(8, 3, dtype=torch.float64) * 3 + 2
    y = kata.BatchNorm1d(3).double()(x)
    zeros, ones = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    torch.testing.assert_close(y.mean(0), zeros, atol=1e-7, rtol=0)
    torch.testing.assert_close(y.var(0, unbiased=False), ones, atol=1e-4, rtol=0)
