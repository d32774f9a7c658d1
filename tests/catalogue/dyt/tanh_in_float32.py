"""Mistake (torch parity): the tanh computed on a float32 copy of α · x, cast back to x's
dtype: a float64 input keeps 7 significant digits instead of 16."""

import torch
from torch import nn

EXPECT = "test_computes_in_float64"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init_value)
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        y = torch.tanh((self.alpha * x).float()).to(x.dtype)
        if self.channels_last:
            return y * self.weight + self.bias
        return y * self.weight[:, None, None] + self.bias[:, None, None]
