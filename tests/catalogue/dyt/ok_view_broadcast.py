"""Correct, written differently: weight and bias viewed once to the layout's broadcast shape,
(1, C, 1, 1) channels first, and the tanh written out as 2·sigmoid(2αx) − 1."""

import torch
from torch import nn

EXPECT = "pass"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.shape = (num_features,) if channels_last else (1, num_features, 1, 1)
        self.alpha = nn.Parameter(alpha_init_value * torch.ones(1))
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        t = 2 * torch.sigmoid(2 * self.alpha * x) - 1
        return self.weight.view(self.shape) * t + self.bias.view(self.shape)
