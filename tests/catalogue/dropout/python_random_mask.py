"""Mistake: draws the mask element by element with Python's random module.

One torch.tensor(...) of the whole mask keeps the count of tensor operations constant, but the
Python loop runs once per element, the mask ignores torch.manual_seed, and it is made on the
host and copied to the device on every call.
"""

import random

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_vectorized"
ALSO = "test_follows_torch_seed"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        keep = [random.random() >= self.p for _ in range(x.numel())]
        mask = torch.tensor(keep, dtype=x.dtype).reshape(x.shape).to(x.device) * scale
        return x.mul_(mask) if self.inplace else x * mask
