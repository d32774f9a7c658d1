"""Mistake: drop_path's drop_prob defaults to 0.5, nn.Dropout's p, instead of timm's 0.0, so
drop_path(x, training=True) drops half the samples."""

from solutions.droppath import DropPath as Reference
from solutions.droppath import drop_path as reference_drop_path

EXPECT = "test_eval_is_identity"


def drop_path(x, drop_prob=0.5, training=False, scale_by_keep=True):
    return reference_drop_path(x, drop_prob, training, scale_by_keep)


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
