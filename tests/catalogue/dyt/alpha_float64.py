"""Mistake: α made in float64 "for precision": a float32 input times it is promoted, and the
whole layer returns float64."""

import torch
from torch import nn

EXPECT = "test_output_like_input"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.full((1,), alpha_init_value, dtype=torch.float64))
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        y = torch.tanh(self.alpha * x)
        if self.channels_last:
            return y * self.weight + self.bias
        return y * self.weight[:, None, None] + self.bias[:, None, None]
