"""Mistake: decides each sample with Python's random module, in a loop over the batch."""

import random

import torch

from solutions.droppath import DropPath as Reference

EXPECT = "test_vectorized"
ALSO = "test_follows_torch_seed"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    scale = 1 / keep_prob if keep_prob > 0 and scale_by_keep else 1.0
    keep = [scale if random.random() < keep_prob else 0.0 for _ in range(x.shape[0])]
    mask = torch.tensor(keep, dtype=x.dtype, device=x.device)
    return x * mask.view((-1,) + (1,) * (x.dim() - 1))


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
