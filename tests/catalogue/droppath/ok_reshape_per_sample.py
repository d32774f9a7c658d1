"""Correct, written differently: each sample flattened with reshape, which copies only when x
is not contiguous, masked as a (N, 1) column, and shaped back like x."""

import torch
from torch import nn

EXPECT = "pass"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if not training or drop_prob == 0.0:
        return x
    keep_prob = 1.0 - drop_prob
    rows = x.reshape(x.shape[0], -1)
    keep = torch.empty(x.shape[0], 1, dtype=x.dtype, device=x.device).bernoulli_(keep_prob)
    if scale_by_keep and keep_prob > 0.0:
        keep = keep / keep_prob
    return (rows * keep).reshape(x.shape)


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
