"""Mistake: flattens each sample with x.view(N, -1), which raises on a non-contiguous x (a
transposed or sliced tensor); reshape, or a mask that broadcasts, takes any layout."""

import torch

from solutions.droppath import DropPath as Reference

EXPECT = "test_non_contiguous_input"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1.0 - drop_prob
    flat = x.view(x.shape[0], -1)
    keep = (torch.rand(flat.shape[0], 1, device=x.device) < keep_prob).to(x.dtype)
    if keep_prob > 0.0 and scale_by_keep:
        keep = keep / keep_prob
    return (flat * keep).view(x.shape)


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
