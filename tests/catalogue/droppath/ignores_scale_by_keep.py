"""Mistake: always scales the survivors, whatever scale_by_keep says."""

from solutions.droppath import DropPath as Reference
from solutions.droppath import drop_path as reference_drop_path

EXPECT = "test_no_scaling_without_scale_by_keep"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    return reference_drop_path(x, drop_prob, training, True)


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
