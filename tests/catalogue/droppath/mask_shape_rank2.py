"""Mistake: a mask of shape (N, 1), as if every input were (batch, features)."""

import torch

from solutions.droppath import DropPath as Reference

EXPECT = "test_output_like_input"
ALSO = "test_whole_sample_dropped, test_forward_matches_timm"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    mask = (torch.rand(x.shape[0], 1, device=x.device) < keep_prob).to(x.dtype)
    return x * mask / keep_prob if keep_prob > 0 and scale_by_keep else x * mask


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
