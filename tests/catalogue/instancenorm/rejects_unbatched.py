"""Mistake: only batched inputs accepted: (C, L) and (C, H, W) raise ValueError."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_unbatched_input"
ALSO = "test_forward_matches_torch"


class Mistake:
    def forward(self, x):
        if x.dim() == self._get_no_batch_dim():
            raise ValueError(f"expected a batched input, got {x.dim()}D")
        return super().forward(x)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
