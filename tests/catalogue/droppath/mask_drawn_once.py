"""Mistake: draws the keep decisions once, the first time, and reuses them on every call."""

import torch

from solutions.droppath import DropPath as Reference
from solutions.droppath import drop_path as reference_drop_path

EXPECT = "test_fresh_draw_each_call"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    return reference_drop_path(x, drop_prob, training, scale_by_keep)


class DropPath(Reference):
    def forward(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep_prob = 1 - self.drop_prob
        cached = getattr(self, "_keep", None)
        if cached is None or cached.shape[0] != x.shape[0]:
            self._keep = torch.rand(x.shape[0], device=x.device) < keep_prob
        mask = self._keep.to(x.device, x.dtype).view((-1,) + (1,) * (x.dim() - 1))
        return x * mask / keep_prob if keep_prob > 0 and self.scale_by_keep else x * mask
