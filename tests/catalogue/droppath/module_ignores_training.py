"""Mistake: DropPath.forward leaves out self.training, so drop_path gets its default,
training=False, and the module is the identity in training too: nothing is ever dropped."""

import solutions.droppath as reference

EXPECT = "test_keep_fraction"
ALSO = (
    "test_draws_per_sample_not_per_batch, "
    "test_survivors_scaled, "
    "test_drop_prob_one_gives_zeros, "
    "test_fresh_draw_each_call, "
    "test_forward_matches_timm"
)


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    return reference.drop_path(x, drop_prob, training, scale_by_keep)


class DropPath(reference.DropPath):
    def forward(self, x):
        return drop_path(x, self.drop_prob, scale_by_keep=self.scale_by_keep)
