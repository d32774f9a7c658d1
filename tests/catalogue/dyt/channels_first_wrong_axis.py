"""Mistake: channels first with the weight shaped (C, 1): against (N, C, H, W) it lines up
with H, not with the channels (and fails to broadcast where H differs from C)."""

import torch
from torch import nn

EXPECT = "test_channels_first"
ALSO = "test_forward_matches_formula, test_gradients_match"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init_value)
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        y = torch.tanh(self.alpha * x)
        if self.channels_last:
            return y * self.weight + self.bias
        return y * self.weight[:, None] + self.bias[:, None]
