"""Your tests of RMSNorm: pass every correct layer, fail every wrong one.

"How would you verify that your RMSNorm is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many RMSNorms: the reference, correct
ones written in other ways, and the mistakes candidates make in interviews (with small changes
to the reference as the stretch). Every test must pass on every correct layer; each wrong layer
must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.RMSNorm` is the class, with
torch.nn.RMSNorm's signature, RMSNorm(normalized_shape, eps=None, elementwise_affine=True)
(katas/rmsnorm.py states the contract). The grader calls each test once for each layer. Use
torch and pytest: torch.testing.assert_close, pytest.raises, and torch's own nn.RMSNorm as a
reference where it helps.

Test behaviour: values, gradients, the state_dict, dtypes, errors. How the layer is written (no
built-in layer, no Python loop) is the grader's to watch, not your tests'.

Where to look
-------------
- the formula: over the normalized_shape dims, the mean of the squares (no mean subtracted),
  eps inside the root, then times the weight;
- the parameter: its name, shape and first value, as a checkpoint of nn.RMSNorm has it, and the
  constructor's arguments kept as given;
- the options: eps (None by default), elementwise_affine, a normalized_shape of several dims;
- inputs that show a mistake: all zeros, a large mean, a weight other than ones, float64 and
  float16 (large values too), a tiny RMS with the default eps, the input left as it was, the
  gradients.

Grade yourself with::

    nox -s kata-rmsnorm -- --tests
"""

import torch


def test_each_row_has_root_mean_square_one(kata):
    """With weight 1 (its first value) and a small eps, each row is scaled so that the mean of
    its squares is 1, and its mean is not removed."""
    torch.manual_seed(0)
    x = torch.randn(4, 8, dtype=torch.float64) * 3 + 2
    y = kata.RMSNorm(8, eps=1e-12).double()(x)
    ones = torch.ones(4, dtype=torch.float64)
    torch.testing.assert_close(y.square().mean(-1), ones, atol=1e-6, rtol=0)
    # Not centred: every output keeps the sign of its input.
    assert torch.equal(y.sign(), x.sign())
