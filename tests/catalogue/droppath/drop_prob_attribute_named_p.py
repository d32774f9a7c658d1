"""Mistake: stores the probability as self.p (Dropout's name), not self.drop_prob."""

from torch import nn

from solutions.droppath import drop_path as reference_drop_path

EXPECT = "test_attributes"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    return reference_drop_path(x, drop_prob, training, scale_by_keep)


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.p = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.p, self.training, self.scale_by_keep)
