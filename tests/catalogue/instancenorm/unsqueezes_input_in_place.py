"""Mistake: an unbatched input is made a batch of one with x.unsqueeze_(0), which reshapes the
caller's tensor to (1, C, ...) for good; the output itself is right."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_input_unmodified"


class Mistake:
    def forward(self, x):
        if x.dim() == self._get_no_batch_dim():
            return super().forward(x.unsqueeze_(0)).squeeze(0)
        return super().forward(x)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
