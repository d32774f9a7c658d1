"""Mistake: the weight inside the tanh, tanh(weight · α · x) + bias: every channel stays within
±1 of its bias, where the weight should scale the squashed output."""

import torch
from torch import nn

EXPECT = "test_affine_after_tanh"
ALSO = "test_forward_matches_formula, test_gradients_match"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init_value)
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        shape = (-1,) if self.channels_last else (-1, 1, 1)
        w, b = self.weight.reshape(shape), self.bias.reshape(shape)
        return torch.tanh(w * self.alpha * x) + b
