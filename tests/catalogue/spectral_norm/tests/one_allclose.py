"""A learner's single test of spectral_norm: a Linear holding torch's checkpoint (weight, u and
v) gives torch's normalized weight in eval mode. Training steps, gradients, eps, conv weights
and the other options go untested."""

import torch
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm as torch_spectral_norm

CATCHES = "v_from_w, not_persistent, frobenius_norm"
FALSE_ALARMS = ""


def test_eval_weight_matches_torch(kata):
    """In eval mode, the normalized weight is torch's, from the same state_dict."""
    torch.manual_seed(0)
    ref = torch_spectral_norm(nn.Linear(5, 3)).eval()
    mine = kata.spectral_norm(nn.Linear(5, 3))
    mine.load_state_dict(ref.state_dict())
    torch.testing.assert_close(mine.eval().weight, ref.weight)
