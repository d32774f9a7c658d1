"""A learner's single test of Welford: one update with one batch, its variance compared with
torch.var. Streams, merges, empty batches, the edge cases' NaN and dtypes go untested."""

import torch

CATCHES = "var_biased_by_default, mean_updated_before_delta, counts_elements_not_rows"
FALSE_ALARMS = ""


def test_var_matches_torch(kata):
    """After one update, var() is torch.var of the batch."""
    torch.manual_seed(0)
    x = torch.randn(8, 4) * 2 + 1
    w = kata.Welford(4)
    w.update(x)
    torch.testing.assert_close(w.var(), torch.var(x, 0))
