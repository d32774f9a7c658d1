"""Mistake: α always starts at 0.5, whatever alpha_init_value says: the paper tunes it, lower
for large language models."""

import torch
from torch import nn

EXPECT = "test_initial_values"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.tensor([0.5]))
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        y = torch.tanh(self.alpha * x)
        if self.channels_last:
            return y * self.weight + self.bias
        return y * self.weight[:, None, None] + self.bias[:, None, None]
