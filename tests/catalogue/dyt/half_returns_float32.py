"""Mistake (torch parity): half-precision inputs computed in float32, for accuracy, and never
cast back: a float16 or bfloat16 model gets float32 activations from every DyT."""

import torch
from torch import nn

EXPECT = "test_half_precision"


class DyT(nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5, channels_last=True):
        super().__init__()
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init_value)
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        wide = x.dtype in (torch.float16, torch.bfloat16)
        a, w, b = (t.float() if wide else t for t in (self.alpha, self.weight, self.bias))
        y = torch.tanh(a * (x.float() if wide else x))
        if self.channels_last:
            return y * w + b
        return y * w[:, None, None] + b[:, None, None]
