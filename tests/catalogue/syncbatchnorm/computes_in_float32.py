"""Mistake: always normalizes x.float() and casts the result back, also for a float64 input.

Written for mixed precision (statistics, collectives and the normalization in float32), it also
rounds a float64 input to float32 on every rank, where torch computes in float64. A dtype
policy, not a mistake in what is synchronised: the interview core passes.
"""

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_computes_in_float64"


class SyncBatchNorm(Reference):
    def forward(self, x):
        return super().forward(x.float()).to(x.dtype)
