"""Mistake: uses F.dropout on a per-sample tensor of ones to build the mask."""

import torch
import torch.nn.functional as F

from solutions.droppath import DropPath as Reference

EXPECT = "test_from_scratch"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    ones = torch.ones((x.shape[0],) + (1,) * (x.dim() - 1), dtype=x.dtype, device=x.device)
    mask = F.dropout(ones, drop_prob, training=True)
    return x * (mask if scale_by_keep else mask * (1 - drop_prob))


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
