"""Correct: the paper's own layer, after DynamicTanh in dynamic_tanh.py of the official code
(github.com/jiachenzhu/DyT, MIT License): normalized_shape and channels_last given in that
order, α as ones(1) times alpha_init_value, and channels first by weight[:, None, None]. Here
behind the kata's signature, channels_last last and True by default."""

import torch
from torch import nn

EXPECT = "pass"


class DynamicTanh(nn.Module):
    def __init__(self, normalized_shape, channels_last, alpha_init_value=0.5):
        super().__init__()
        self.normalized_shape = normalized_shape
        self.alpha_init_value = alpha_init_value
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init_value)
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        x = torch.tanh(self.alpha * x)
        if self.channels_last:
            return x * self.weight + self.bias
        return x * self.weight[:, None, None] + self.bias[:, None, None]


class DyT(DynamicTanh):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__(num_features, channels_last, alpha_init_value)
