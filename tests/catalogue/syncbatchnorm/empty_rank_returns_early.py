"""Mistake: a rank with an empty batch returns at once ("nothing to normalize") and never
joins the collectives the other ranks wait in."""

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_rank_with_empty_batch"


class SyncBatchNorm(Reference):
    def forward(self, x):
        if x.numel() == 0:
            return x.clone()
        return super().forward(x)
