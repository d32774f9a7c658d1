"""Mistake: keeps a sample with probability drop_prob (the comparison turned around)."""

import torch

from solutions.droppath import DropPath as Reference

EXPECT = "test_keep_fraction"
ALSO = "test_drop_prob_one_gives_zeros"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.dim() - 1)
    mask = (torch.rand(shape, device=x.device) < drop_prob).to(x.dtype)
    return x * mask / keep_prob if keep_prob > 0 and scale_by_keep else x * mask


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
