"""Correct, written differently: torch.bernoulli on a full_like probability tensor, torch.where."""

import torch
from torch import nn

EXPECT = "pass"


class Dropout(nn.Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0.0 or p > 1.0:
            raise ValueError("dropout probability has to be between 0 and 1, but got " + str(p))
        self.p = p
        self.inplace = inplace

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return x
        keep = torch.bernoulli(torch.full_like(x, 1.0 - self.p)).bool()
        scale = 1.0 / (1.0 - self.p) if self.p < 1.0 else 0.0
        out = torch.where(keep, x * scale, torch.zeros_like(x))
        return x.copy_(out) if self.inplace else out
