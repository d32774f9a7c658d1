"""Correct: the paper's own layer as the official code writes it (DynamicTanh in
dynamic_tanh.py, github.com/jiachenzhu/DyT, MIT License), restated here: the constructor takes
normalized_shape and channels_last in that order and keeps both, with alpha_init_value, for
its repr; α is ones(1) times alpha_init_value; the input is overwritten by its tanh, then
scaled and shifted, channels first by indexing the weight and bias with [:, None, None]. The
kata's signature, channels_last last and True by default, is a subclass."""

import torch
from torch import nn

EXPECT = "pass"


class DynamicTanh(nn.Module):
    def __init__(self, normalized_shape, channels_last, alpha_init_value=0.5):
        super().__init__()
        self.normalized_shape, self.channels_last = normalized_shape, channels_last
        self.alpha_init_value = alpha_init_value
        self.alpha = nn.Parameter(alpha_init_value * torch.ones(1))
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        x = torch.tanh(self.alpha * x)
        if not self.channels_last:
            return self.weight[:, None, None] * x + self.bias[:, None, None]
        return self.weight * x + self.bias

    def extra_repr(self):
        return (
            f"normalized_shape={self.normalized_shape}, alpha_init_value="
            f"{self.alpha_init_value}, channels_last={self.channels_last}"
        )


class DyT(DynamicTanh):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__(num_features, channels_last, alpha_init_value)
