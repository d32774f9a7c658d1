"""Mistake: num_features never compared with the input's channels."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_num_features_mismatch"


class Mistake:
    def forward(self, x):
        self._check_input_dim(x)
        if x.dim() == self._get_no_batch_dim():
            return self._normalize(x.unsqueeze(0)).squeeze(0)
        return self._normalize(x)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
