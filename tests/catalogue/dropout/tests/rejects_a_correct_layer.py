"""An over-strict attempt: demands that Dropout(0.0) return the very tensor it was given,
where the kata asks only for the input's values; its other tests are sound."""

import torch

CATCHES = "drops_by_indexing, drops_in_eval, scales_in_eval, drops_whole_rows, keeps_with_prob_p"
FALSE_ALARMS = "test_p_zero_returns_input_itself"


def test_p_zero_returns_input_itself(kata):
    """With p = 0 nothing is dropped, so the layer hands back x itself."""
    x = torch.randn(4, 8)
    assert kata.Dropout(0.0)(x) is x


def test_eval_is_identity(kata):
    """In eval mode the output equals the input."""
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    torch.testing.assert_close(kata.Dropout(0.3).eval()(x), x)


def test_drops_a_fraction_p(kata):
    """About a fraction p of the elements is zeroed (6σ on 10,000 elements)."""
    torch.manual_seed(0)
    p = 0.2
    dropped = (kata.Dropout(p)(torch.ones(10_000)) == 0).float().mean().item()
    assert abs(dropped - p) < 6 * (p * (1 - p) / 10_000) ** 0.5
