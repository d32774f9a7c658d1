"""Mistake: upcasts every input to float32 and returns float32, whatever dtype came in."""

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_output_like_input"
ALSO = (
    "test_biased_variance_in_training, "
    "test_batchnorm1d_reduces_over_n_l, "
    "test_batchnorm2d_reduces_over_n_h_w, "
    "test_eval_uses_running_stats, "
    "test_forward_matches_torch"
)


class Float32:
    def forward(self, x):
        y = super().forward(x)
        return y.float()


class BatchNorm1d(Float32, Reference1d):
    pass


class BatchNorm2d(Float32, Reference2d):
    pass
