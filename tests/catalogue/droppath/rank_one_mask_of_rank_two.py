"""Mistake: the mask always has at least two dims, (N, 1) for an input of shape (N,): the
product broadcasts to (N, N) instead of dropping single values. Right for every rank from 2."""

import torch

from solutions.droppath import DropPath as Reference

EXPECT = "test_output_like_input"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1.0 - drop_prob
    shape = (x.shape[0],) + (1,) * max(x.dim() - 1, 1)  # the mistake: (N, 1) for x of (N,)
    keep = (torch.rand(shape, device=x.device) < keep_prob).to(x.dtype)
    if keep_prob > 0.0 and scale_by_keep:
        keep = keep / keep_prob
    return x * keep


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
