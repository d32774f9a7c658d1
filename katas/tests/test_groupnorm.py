"""Your tests of GroupNorm: pass every correct layer, fail every wrong one.

"How would you verify that your GroupNorm is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many GroupNorms: the reference, correct
ones written in other ways, and the mistakes candidates make in interviews (with small changes
to the reference as the stretch). Every test must pass on every correct layer; each wrong layer
must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.GroupNorm` is the class, with
torch.nn.GroupNorm's signature, GroupNorm(num_groups, num_channels, eps=1e-5, affine=True)
(katas/groupnorm.py states the contract). The grader calls each test once for each layer. Use
torch and pytest: torch.testing.assert_close, pytest.raises, and torch's own nn.GroupNorm as a
reference where it helps.

Test behaviour: values, gradients, the state_dict, dtypes, train and eval, errors. How the layer
is written (no built-in layer, no Python loop) is the grader's to watch, not your tests'.

Where to look
-------------
- the formula: per sample, over each group of C/G consecutive channels and all positions, mean
  and biased variance, eps inside the root; then a scale and shift per channel, not per group;
- which channels share a group, and that the other samples of the batch play no part;
- the parameters: names, shapes and first values, as a checkpoint of nn.GroupNorm has them;
- the options: eps, affine=False, G = 1 and G = C, inputs of rank 2, 3 and 4;
- inputs that show a mistake: a small variance, a large mean in float32, float64 and half
  precision, train against eval, the input left as it was, the gradients, a transposed input,
  an empty batch, num_channels that num_groups does not divide.

Grade yourself with::

    nox -s kata-groupnorm -- --tests
"""

import torch


def test_each_group_has_mean_zero_and_variance_one(kata):
    """With weight 1 and bias 0 (their first values), each sample's group of consecutive
    channels is centred and scaled to variance 1 over its channels and positions."""
    torch.manual_seed(0)
    x = torch.randn(4, 6, 5, dtype=torch.float64) * 3 + 2
    y = kata.GroupNorm(3, 6).double()(x)
    groups = y.reshape(4, 3, -1)  # (N, G, C/G * L): group g is channels 2g and 2g + 1
    zeros, ones = torch.zeros(4, 3, dtype=torch.float64), torch.ones(4, 3, dtype=torch.float64)
    torch.testing.assert_close(groups.mean(-1), zeros, atol=1e-7, rtol=0)
    torch.testing.assert_close(groups.var(-1, unbiased=False), ones, atol=1e-4, rtol=0)
