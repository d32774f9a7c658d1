"""Mistake: α kept as a plain Python float, the initial value: a constant, never learned."""

import torch
from torch import nn

EXPECT = "test_alpha_is_one_learnable_scalar"
ALSO = "test_alpha_learns, test_gradients_match"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.alpha = alpha_init_value
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        y = torch.tanh(self.alpha * x)
        if self.channels_last:
            return y * self.weight + self.bias
        return y * self.weight[:, None, None] + self.bias[:, None, None]
