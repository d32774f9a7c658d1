"""Mistake: scales by 1 / (1 - p) in eval mode too, as if inference needed the correction."""

from solutions.droppath import DropPath as Reference
from solutions.droppath import drop_path as reference_drop_path

EXPECT = "test_eval_is_identity"
ALSO = "test_forward_matches_timm"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if not training and drop_prob < 1:
        return x / (1 - drop_prob)
    return reference_drop_path(x, drop_prob, training, scale_by_keep)


class DropPath(Reference):
    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
