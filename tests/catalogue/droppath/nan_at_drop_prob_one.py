"""Mistake: always divides by the keep probability, so drop_prob = 1 gives 0 · inf = NaN."""

import torch

from solutions.droppath import DropPath as Reference

EXPECT = "test_drop_prob_one_gives_zeros"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    mask = torch.rand((x.shape[0],) + (1,) * (x.dim() - 1), device=x.device) < keep_prob
    mask = mask.to(x.dtype)
    if scale_by_keep:
        mask = mask / torch.tensor(keep_prob, dtype=x.dtype, device=x.device)
    return x * mask


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
