"""Mistake: wraps the masking in torch.no_grad() ('dropout has no parameters'), so no gradient
reaches x through the dropout."""

import torch
from torch import nn

EXPECT = "test_gradients_match"
ALSO = "test_p_one_gives_zeros"


class Dropout(nn.Module):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        with torch.no_grad():
            mask = (torch.rand_like(x) >= self.p).to(x.dtype) * scale
            if self.inplace:
                return x.mul_(mask)
            return x * mask
