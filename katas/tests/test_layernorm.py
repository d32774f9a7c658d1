"""Your tests of LayerNorm: pass every correct layer, fail every wrong one.

"How would you verify that your LayerNorm is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many LayerNorms: the reference, correct
ones written in other ways, and the mistakes candidates make in interviews (with small changes
to the reference as the stretch). Every test must pass on every correct layer; each wrong layer
must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.LayerNorm` is the class, with
torch.nn.LayerNorm's signature (katas/layernorm.py states the contract). The grader calls each
test once for each layer. Use torch and pytest: torch.testing.assert_close, pytest.raises, and
torch's own nn.LayerNorm as a reference where it helps.

Test behaviour: values, gradients, the state_dict, dtypes, train and eval, errors. How the layer
is written (no built-in layer, no Python loop) is the grader's to watch, not your tests'.

Where to look
-------------
- the formula: over the normalized_shape dims, mean and biased variance, eps inside the root;
- the parameters: names, shapes and first values, as a checkpoint of nn.LayerNorm has them;
- the options: eps (0.0 too), elementwise_affine, bias, a normalized_shape of several dims;
- inputs that show a mistake: a small variance, a large mean, float16, the input left as it was,
  the gradients.

Grade yourself with::

    nox -s kata-layernorm -- --tests
"""

import torch


def test_each_row_has_mean_zero_and_variance_one(kata):
    """With weight 1 and bias 0 (their first values), each row is centred and scaled to
    variance 1 over the normalized dim."""
    torch.manual_seed(0)
    x = torch.randn(4, 8, dtype=torch.float64) * 3 + 2
    y = kata.LayerNorm(8).double()(x)
    zeros, ones = torch.zeros(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64)
    torch.testing.assert_close(y.mean(-1), zeros, atol=1e-7, rtol=0)
    torch.testing.assert_close(y.var(-1, unbiased=False), ones, atol=1e-4, rtol=0)
