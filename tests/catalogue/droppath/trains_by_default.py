"""Mistake: drop_path's training defaults to True, so drop_path(x, p), a call that never asked
to train, drops samples (timm's default is training=False)."""

from solutions.droppath import DropPath as Reference
from solutions.droppath import drop_path as reference_drop_path

EXPECT = "test_eval_is_identity"


def drop_path(x, drop_prob=0.0, training=True, scale_by_keep=True):
    return reference_drop_path(x, drop_prob, training, scale_by_keep)


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
