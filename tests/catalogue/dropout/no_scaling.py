"""Mistake: zeroes elements but never scales the survivors by 1/(1-p).

Self-contained, as a learner writes it: the practice self-tests save it as a learner's file.
"""

import torch
from torch import nn

EXPECT = "test_kept_values_scaled"
ALSO = "test_forward_matches_torch, test_gradients_match"


class Dropout(nn.Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, x):
        if not self.training:
            return x
        mask = (torch.rand_like(x) >= self.p).to(x.dtype)
        return x.mul_(mask) if self.inplace else x * mask
