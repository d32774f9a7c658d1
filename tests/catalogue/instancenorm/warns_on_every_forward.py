"""Mistake: a layer without affine warns that num_features does not match on every forward,
even when the channel dim matches it (torch warns only when they differ)."""

import warnings

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_no_warning_when_channels_match"


class Mistake:
    def forward(self, x):
        if not self.affine:
            warnings.warn(
                "input's size at the channel dim does not match num_features", stacklevel=2
            )
        return super().forward(x)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
