"""Mistake: keeps BatchNorm's "one value per channel" error on every rank, though the
statistics come from the global batch."""

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_rank_with_batch_of_one"


class SyncBatchNorm(Reference):
    def forward(self, x):
        if self.training and x.numel() // x.size(1) == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, "
                f"got input size {list(x.shape)}"
            )
        return super().forward(x)
