"""Mistake: a mask of shape (1, ...): one draw for the whole batch, not one per sample."""

import torch

from solutions.droppath import DropPath as Reference

EXPECT = "test_draws_per_sample_not_per_batch"
ALSO = "test_keep_fraction"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    mask = (torch.rand((1,) * x.dim(), device=x.device) < keep_prob).to(x.dtype)
    return x * mask / keep_prob if keep_prob > 0 and scale_by_keep else x * mask


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
