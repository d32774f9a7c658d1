"""Your tests of DropPath: pass every correct layer, fail every wrong one.

"How would you verify that your DropPath is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many DropPaths: the reference, correct
ones written in other ways, and the mistakes candidates make in interviews (with small changes
to the reference as the stretch). Every test must pass on every correct layer; each wrong layer
must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.drop_path` is the function,
drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True), and `kata.DropPath` the class,
DropPath(drop_prob=0.0, scale_by_keep=True), whose forward calls drop_path with self.training,
as timm's (katas/droppath.py states the contract). The grader calls each test once for each
layer. Use torch and pytest: torch.testing.assert_close and pytest.raises.

Test behaviour: values, gradients, the state_dict, dtypes, train and eval, errors. How the layer
is written (no built-in dropout, no Python loop, the mask on x's device) is the grader's to
watch, not your tests'.

DropPath is random, so seed torch in every test, and judge the random part with bounds that no
correct layer fails by chance: 6σ on many samples, or many independent draws, rather than one
exact count. An input with no zeros makes every zero of the output a drop.

Where to look
-------------
- the formula: each sample (along dim 0) is all zeros or x / (1 - drop_prob) as a whole, and
  x itself with scale_by_keep=False; drop_prob is the probability of dropping;
- the attributes: drop_prob and scale_by_keep with their defaults, and no parameters, buffers
  or state; drop_path's own defaults;
- the draw: each sample on its own (not one draw for the whole batch, not one per element), a
  new draw on every call, from torch's generator so that torch.manual_seed repeats it;
- the edges: eval mode and training=False, drop_prob = 0 and drop_prob = 1 (no NaN in the
  output or the gradient), inputs of rank 1 and of rank 3 or more;
- inputs that show a mistake: the input left as it was, the gradient, float64 kept to its
  precision, float16 and bfloat16, a transposed or sliced input.

Grade yourself with::

    nox -s kata-droppath -- --tests
"""

import torch


def test_whole_samples_dropped(kata):
    """In training each sample (along dim 0) is dropped or kept as a whole: all of its values
    are 0, or none are."""
    torch.manual_seed(0)
    x = torch.rand(64, 3, 8, dtype=torch.float64) + 0.5  # no zeros: a zero in y is a drop
    y = kata.DropPath(0.5)(x.clone())
    zeros = (y == 0).reshape(64, -1)
    mixed = zeros.any(1) & ~zeros.all(1)
    assert not mixed.any(), f"samples {mixed.nonzero().flatten().tolist()} are partly dropped"
