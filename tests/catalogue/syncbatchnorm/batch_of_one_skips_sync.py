"""Mistake: a rank with a single sample skips the synchronisation and normalizes it with the
running statistics: the other ranks wait for it at the all_gather forever."""

import torch

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_every_rank_joins_the_same_collectives"
ALSO = "test_rank_with_batch_of_one"


class SyncBatchNorm(Reference):
    def forward(self, x):
        if self.training and x.numel() == x.size(1) and self.running_mean is not None:
            # One value per channel has no variance: use the running estimates instead.
            shape = [1, -1] + [1] * (x.dim() - 2)
            y = (x - self.running_mean.view(shape)) * torch.rsqrt(
                self.running_var.view(shape) + self.eps
            )
            return y * self.weight.view(shape) + self.bias.view(shape) if self.affine else y
        return super().forward(x)
