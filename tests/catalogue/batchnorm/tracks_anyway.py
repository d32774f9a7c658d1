"""Mistake: track_running_stats=False still creates the buffers, and eval mode uses them."""

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_track_running_stats_false"


class TracksAnyway:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True):
        super().__init__(num_features, eps, momentum, affine, True)
        self.track_running_stats = track_running_stats


class BatchNorm1d(TracksAnyway, Reference1d):
    pass


class BatchNorm2d(TracksAnyway, Reference2d):
    pass
