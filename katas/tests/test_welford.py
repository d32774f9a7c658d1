"""Your tests of Welford's running statistics: pass every correct one, fail every wrong one.

"How would you verify that your Welford is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many Welford accumulators: the
reference, correct ones written in other ways, and the mistakes candidates make in interviews
(with small changes to the reference as the stretch). Every test must pass on every correct
one; each wrong one must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.Welford` is the class, a plain
object built as Welford(num_features, *, device=None, dtype=None), with the attributes count
(the rows seen, an int) and mean (an (F,) tensor) and the methods update(x) for a batch x of
shape (B, F), merge(other) and var(correction=1) (katas/welford.py states the contract). The
grader calls each test once for each accumulator. Use torch and pytest:
torch.testing.assert_close, pytest.raises, and torch.var_mean or torch.var of the rows seen as
the reference.

Test behaviour: values, dtypes, devices, what is left as it was, errors. How the code is
written (no Python loop over the features, no rows kept) is the grader's to watch, not your
tests'.

Where to look
-------------
- the statistics of every row seen, read at any point: count, mean, var() unbiased by default
  and var(correction=0) biased, as torch.var;
- how the rows arrive: batches of different sizes, a batch of one row, an empty batch, the
  merge of two accumulators (either way round, one of them empty, both empty);
- the edge cases torch answers with NaN: one row's unbiased variance, no rows at all;
- what must stay as it was: the caller's batch, the other accumulator after a merge (and the
  merged one when the other goes on), the state when it is only read;
- numbers that show a mistake: float32 with a large mean (1e4), a float64 state given float32
  batches, a float32 state given float64 ones, torch's default dtype, half-precision batches,
  a fractional correction or one past the count.

Grade yourself with::

    nox -s kata-welford -- --tests
"""

import torch


def test_batches_give_the_statistics_of_all_their_rows(kata):
    """Two batches of different sizes and means: count, mean and var() are those of their rows
    together, as torch.var_mean computes them."""
    torch.manual_seed(0)
    x, y = torch.randn(7, 4) - 1, torch.randn(3, 4) * 2 + 5
    w = kata.Welford(4)
    w.update(x.clone())
    w.update(y.clone())
    var, mean = torch.var_mean(torch.cat([x, y]), 0)
    assert int(w.count) == 10
    torch.testing.assert_close(w.mean, mean, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(w.var(), var, rtol=1e-5, atol=1e-5)
