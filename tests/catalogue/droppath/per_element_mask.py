"""Mistake: one draw per element, a mask of x's full shape: that is Dropout, not DropPath."""

import torch

from solutions.droppath import DropPath as Reference

EXPECT = "test_whole_sample_dropped"
ALSO = "test_forward_matches_timm"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    mask = (torch.rand_like(x) < keep_prob).to(x.dtype)
    return x * mask / keep_prob if keep_prob > 0 and scale_by_keep else x * mask


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
