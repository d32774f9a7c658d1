"""Your tests of Dropout: pass every correct layer, fail every wrong one.

"How would you verify that your Dropout is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many Dropouts: the reference, correct
ones written in other ways, and the mistakes candidates make in interviews (with small changes
to the reference as the stretch). Every test must pass on every correct layer; each wrong layer
must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.Dropout` is the class, with
torch.nn.Dropout's signature, Dropout(p=0.5, inplace=False) (katas/dropout.py states the
contract). The grader calls each test once for each layer. Use torch and pytest:
torch.testing.assert_close, pytest.raises, and torch's own nn.Dropout as a reference where it
helps.

Test behaviour: values, gradients, the state_dict, dtypes, train and eval, errors. How the layer
is written (no built-in dropout, no Python loop, the mask on x's device) is the grader's to
watch, not your tests'.

Dropout is random, so seed torch in every test, and judge the random part with bounds that no
correct layer fails by chance: 6σ on many elements, or many independent draws, rather than one
exact count. An input with no zeros makes every zero of the output a drop.

Where to look
-------------
- the formula: each element is 0 or x / (1 - p), and p is the probability of dropping;
- the attributes: p and inplace with their defaults, and no parameters, buffers or state;
- the draw: each element on its own (not whole rows or columns, not a fixed count), a new mask
  on every call, from torch's generator so that torch.manual_seed repeats it;
- the edges: p = 0 and p = 1 (no NaN in the output or the gradient), eval mode, p outside
  [0, 1], inplace=True;
- inputs that show a mistake: the input left as it was, the gradient, float64 kept to its
  precision, float16 and bfloat16.

Grade yourself with::

    nox -s kata-dropout -- --tests
"""

import torch


def test_kept_values_scaled_by_one_over_keep_prob(kata):
    """In training every output element is either 0 (dropped) or x / (1 - p) (kept)."""
    torch.manual_seed(0)
    p = 0.25
    x = torch.rand(32, 64, dtype=torch.float64) + 0.5  # no zeros: a zero in y is a drop
    y = kata.Dropout(p)(x.clone())
    kept = y != 0
    assert kept.any() and not kept.all(), f"kept {int(kept.sum())} of {kept.numel()} elements"
    torch.testing.assert_close(y[kept], x[kept] / (1 - p), rtol=1e-6, atol=0)
