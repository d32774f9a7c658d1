"""Correct, written differently: timm's older floor(keep_prob + rand) mask, divide first."""

import torch
from torch import nn

EXPECT = "pass"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = (keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)).floor_()
    if keep_prob > 0 and scale_by_keep:
        return x.div(keep_prob) * random_tensor
    return x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
