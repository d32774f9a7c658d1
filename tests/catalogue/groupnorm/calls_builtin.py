"""Mistake: calls the built-in F.group_norm."""

import torch.nn.functional as F

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_from_scratch"


class GroupNorm(Reference):
    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)
