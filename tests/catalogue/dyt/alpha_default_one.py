"""Mistake: α's default initial value is 1, where the paper's is 0.5: the untrained layer is
tanh(x), not tanh(x / 2)."""

import torch
from torch import nn

EXPECT = "test_initial_values"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=1.0, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init_value)
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        y = torch.tanh(self.alpha * x)
        if self.channels_last:
            return y * self.weight + self.bias
        return y * self.weight[:, None, None] + self.bias[:, None, None]
