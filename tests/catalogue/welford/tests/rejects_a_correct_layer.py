"""A learner's tests of Welford with one over-strict test: it requires count to be a Python
int, where the contract also allows an integer tensor (a count kept on the state's device is
correct). The other two tests are sound."""

import torch

CATCHES = (
    "var_biased_by_default, mean_updated_before_delta, averages_batch_means, "
    "batch_m2_from_unbiased_var, merge_count_updated_first, merge_delta_after_mean, "
    "merge_drops_spread_term, merge_weights_by_batches, counts_elements_not_rows"
)
FALSE_ALARMS = "test_count_is_a_python_int"


def test_stream_matches_var_mean(kata):
    """Batches of different sizes give torch.var_mean of all their rows."""
    torch.manual_seed(0)
    batches = [torch.randn(n, 4) + n for n in (3, 1, 6)]
    w = kata.Welford(4)
    for x in batches:
        w.update(x.clone())
    var, mean = torch.var_mean(torch.cat(batches), 0)
    torch.testing.assert_close(w.mean, mean, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(w.var(), var, rtol=1e-5, atol=1e-5)


def test_merge_matches_var_mean(kata):
    """a.merge(b) gives torch.var_mean of the rows of both."""
    torch.manual_seed(1)
    x, y = torch.randn(5, 3) - 2, torch.randn(2, 3) + 3
    a, b = kata.Welford(3), kata.Welford(3)
    a.update(x.clone())
    b.update(y.clone())
    a.merge(b)
    var, mean = torch.var_mean(torch.cat([x, y]), 0)
    torch.testing.assert_close(a.mean, mean, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(a.var(), var, rtol=1e-5, atol=1e-5)


def test_count_is_a_python_int(kata):
    """count is the Python int 7 after 7 rows."""
    w = kata.Welford(3)
    w.update(torch.randn(7, 3))
    assert type(w.count) is int and w.count == 7
