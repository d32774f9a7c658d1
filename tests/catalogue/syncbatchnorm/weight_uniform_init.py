"""Mistake: weight drawn from U(0, 1), as nn.SyncBatchNorm's docstring still says (torch
initialises it to ones)."""

from torch import nn

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_parameters"


class SyncBatchNorm(Reference):
    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        process_group=None,
    ):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, process_group)
        if affine:
            nn.init.uniform_(self.weight)  # "the elements of γ are sampled from U(0, 1)"
