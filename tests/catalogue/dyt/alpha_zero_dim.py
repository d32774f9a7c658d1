"""Mistake (torch parity): α as a 0-dim tensor. It computes the same, but the official
DynamicTanh's α has shape (1,), and a strict load_state_dict refuses one for the other."""

import torch
from torch import nn

EXPECT = "test_alpha_shape_like_official"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.tensor(alpha_init_value))
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        y = torch.tanh(self.alpha * x)
        if self.channels_last:
            return y * self.weight + self.bias
        return y * self.weight[:, None, None] + self.bias[:, None, None]
