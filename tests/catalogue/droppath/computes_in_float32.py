"""Mistake: scales the surviving samples in float32 (x.float()), also for a float64 input.

Meant to keep a float16 branch accurate while scaling, x.float() also rounds a float64 input to
float32 before .type_as(x) casts it back. A dtype policy, not a mistake in what is dropped or
how it is scaled: the interview core passes.
"""

import torch

from solutions.droppath import DropPath as Reference

EXPECT = "test_computes_in_float64"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1.0 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.dim() - 1)
    keep = (torch.rand(shape, device=x.device) < keep_prob).float()
    if keep_prob > 0.0 and scale_by_keep:
        keep = keep / keep_prob
    return (x.float() * keep).type_as(x)


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
