"""Mistake: the unbatched output is returned with .squeeze(), not .squeeze(0): every dim of size
1 goes, the sample's own too. InstanceNorm1d(1) on a (1, L) sample returns (L,), a (C, 1, W)
sample comes back (C, W)."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_unbatched_input"


class Mistake:
    def forward(self, x):
        if x.dim() == self._get_no_batch_dim():
            return super().forward(x.unsqueeze(0)).squeeze()
        return super().forward(x)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
