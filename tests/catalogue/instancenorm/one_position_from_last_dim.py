"""Mistake: "one position per channel" is read from the last dim alone (x.size(-1) == 1), not
from the product of the spatial sizes: an (N, C, 4, 1) input, four positions per channel that
torch normalizes, raises ValueError."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_single_spatial_element_raises"


class Mistake:
    def _normalize(self, x):
        if (self.training or not self.track_running_stats) and x.size(-1) == 1:
            raise ValueError(
                f"Expected more than 1 spatial element when training, got input size {x.size()}"
            )
        return super()._normalize(x)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
