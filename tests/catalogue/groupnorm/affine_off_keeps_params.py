"""Mistake: affine=False still creates weight and bias (and just does not use them)."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_no_affine"


class GroupNorm(Reference):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__(num_groups, num_channels, eps, affine=True)
        self.affine = affine

    def forward(self, x):
        if self.affine:
            return super().forward(x)
        with torch.no_grad():
            saved = self.weight.clone(), self.bias.clone()
            self.weight.fill_(1), self.bias.fill_(0)
        try:
            return super().forward(x)
        finally:
            with torch.no_grad():
                self.weight.copy_(saved[0]), self.bias.copy_(saved[1])
