"""Mistake: α registered as a buffer: it moves with .to() and is saved, but gets no gradient,
so it never learns."""

import torch
from torch import nn

EXPECT = "test_alpha_is_one_learnable_scalar"
ALSO = "test_alpha_learns, test_gradients_match"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.register_buffer("alpha", torch.ones(1) * alpha_init_value)
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        y = torch.tanh(self.alpha * x)
        if self.channels_last:
            return y * self.weight + self.bias
        return y * self.weight[:, None, None] + self.bias[:, None, None]
