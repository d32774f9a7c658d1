"""Mistake: builds the output from x.detach(), so no gradient reaches the branch."""

import torch

from solutions.droppath import DropPath as Reference

EXPECT = "test_gradient"
ALSO = "test_drop_prob_one_gives_zeros"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.dim() - 1)
    mask = (torch.rand(shape, device=x.device) < keep_prob).to(x.dtype)
    scale = 1 / keep_prob if keep_prob > 0 and scale_by_keep else 1.0
    return x.detach() * mask * scale


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
