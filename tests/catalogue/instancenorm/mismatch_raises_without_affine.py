"""Mistake: a channel count unlike num_features raises even with affine=False."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_num_features_mismatch"


class Mistake:
    def forward(self, x):
        self._check_input_dim(x)
        dim = x.dim() - self._get_no_batch_dim()
        if x.size(dim) != self.num_features:
            raise ValueError(
                f"expected {self.num_features} channels at dim={dim}, got {x.size(dim)}"
            )
        return super().forward(x)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
