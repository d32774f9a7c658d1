"""Mistake: keeps the scale 1 / keep_prob in a registered buffer, which lands in the state_dict."""

import torch

from solutions.droppath import DropPath as Reference
from solutions.droppath import drop_path as reference_drop_path

EXPECT = "test_attributes"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    return reference_drop_path(x, drop_prob, training, scale_by_keep)


class DropPath(Reference):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__(drop_prob, scale_by_keep)
        self.register_buffer("scale", torch.tensor(1 / (1 - drop_prob) if drop_prob < 1 else 0.0))

    def forward(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        shape = (x.shape[0],) + (1,) * (x.dim() - 1)
        mask = (torch.rand(shape, device=x.device) < 1 - self.drop_prob).to(x.dtype)
        return x * (mask * self.scale.to(x.dtype) if self.scale_by_keep else mask)
