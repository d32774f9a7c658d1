"""Mistake: one α per channel, of shape (num_features,): the per-channel scale is the weight's
job, and the paper's α is one scalar for the whole layer."""

import torch
from torch import nn

EXPECT = "test_alpha_is_one_learnable_scalar"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.full((num_features,), alpha_init_value))
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        shape = (-1,) if self.channels_last else (-1, 1, 1)
        a, w, b = (t.reshape(shape) for t in (self.alpha, self.weight, self.bias))
        return w * torch.tanh(a * x) + b
