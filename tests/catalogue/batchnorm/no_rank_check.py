"""Mistake: never checks the input's rank, so BatchNorm2d silently normalizes a 3D input."""

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_wrong_rank_raises"


class NoRankCheck:
    def _check_input_dim(self, x):
        pass


class BatchNorm1d(NoRankCheck, Reference1d):
    pass


class BatchNorm2d(NoRankCheck, Reference2d):
    pass
