"""Mistake: divides the survivors by drop_prob instead of the keep probability 1 - drop_prob."""

import torch

from solutions.droppath import DropPath as Reference

EXPECT = "test_survivors_scaled"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    shape = (x.shape[0],) + (1,) * (x.dim() - 1)
    mask = (torch.rand(shape, device=x.device) >= drop_prob).to(x.dtype)
    if scale_by_keep and drop_prob < 1:
        mask = mask / drop_prob
    return x * mask


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
