"""Mistake: BatchNorm1d on (N, C, L) reduces over N only: every position gets its own statistics."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Unchanged

EXPECT = "test_batchnorm1d_reduces_over_n_l"
ALSO = "test_forward_matches_torch, test_gradients_match, test_several_steps_then_eval"


class BatchNorm1d(Reference1d):
    def forward(self, x):
        if x.dim() != 3 or not self.training:
            return super().forward(x)
        self._check_input_dim(x)
        mean = x.mean(0, keepdim=True)  # (1, C, L): one mean per channel *and* position
        var = x.var(0, keepdim=True, unbiased=False)
        if self.track_running_stats:
            n = x.size(0)
            self._update_running_stats(mean.mean((0, 2)), var.mean((0, 2)), n)
        y = (x - mean) * torch.rsqrt(var + self.eps)
        if self.affine:
            y = y * self.weight.view(1, -1, 1) + self.bias.view(1, -1, 1)
        return y


class BatchNorm2d(Unchanged):
    """As in the reference."""
