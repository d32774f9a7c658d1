"""Mistake: never divides the survivors by keep_prob, whatever scale_by_keep says."""

import torch
from torch import nn

EXPECT = "test_survivors_scaled"
ALSO = "test_forward_matches_timm"


def drop_path(x, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1.0 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    keep = (torch.rand(shape, device=x.device) < keep_prob).to(x.dtype)
    return x * keep


class DropPath(nn.Module):
    def __init__(self, drop_prob: float = 0.0, scale_by_keep: bool = True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
