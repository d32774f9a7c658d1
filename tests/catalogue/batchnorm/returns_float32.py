"""Mistake: upcasts every input to float32 and returns float32, whatever dtype came in."""

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_output_like_input"
ALSO = "test_forward_matches_torch"


class Float32:
    def forward(self, x):
        y = super().forward(x)
        return y.float()


class BatchNorm1d(Float32, Reference1d):
    pass


class BatchNorm2d(Float32, Reference2d):
    pass
