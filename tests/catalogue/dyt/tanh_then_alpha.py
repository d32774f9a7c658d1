"""Mistake: the tanh of x, then times α: α · tanh(x) rescales an output already squashed to ±1,
where α belongs inside, setting where the tanh saturates."""

import torch
from torch import nn

EXPECT = "test_alpha_inside_tanh"
ALSO = "test_forward_matches_formula, test_gradients_match"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init_value)
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        y = self.alpha * torch.tanh(x)
        if self.channels_last:
            return y * self.weight + self.bias
        return y * self.weight[:, None, None] + self.bias[:, None, None]
