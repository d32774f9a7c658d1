"""Mistake: channels_last is accepted and ignored: weight and bias always run along the last
dim, W of an (N, C, H, W) input."""

import torch
from torch import nn

EXPECT = "test_channels_first"
ALSO = "test_forward_matches_formula, test_gradients_match"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init_value)
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        return self.weight * torch.tanh(self.alpha * x) + self.bias
