"""Mistake: BatchNorm2d reduces over N only, so every pixel gets its own mean and variance."""

import torch

from solutions.batchnorm import BatchNorm1d as Unchanged
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_batchnorm2d_reduces_over_n_h_w"
ALSO = (
    "test_running_var_unbiased, "
    "test_forward_matches_torch, "
    "test_gradients_match, "
    "test_several_steps_then_eval"
)


class BatchNorm2d(Reference2d):
    def forward(self, x):
        if not (self.training or self.running_mean is None):
            return super().forward(x)
        self._check_input_dim(x)
        if x.size(0) == 1:
            raise ValueError("Expected more than 1 value per channel when training")
        mean = x.mean(0, keepdim=True)  # (1, C, H, W)
        var = x.var(0, keepdim=True, unbiased=False)
        if self.training and self.track_running_stats:
            n = x.numel() // x.size(1)
            self._update_running_stats(mean.mean((0, 2, 3)), var.mean((0, 2, 3)), n)
        y = (x - mean) * torch.rsqrt(var + self.eps)
        if self.affine:
            y = y * self.weight.view(1, -1, 1, 1) + self.bias.view(1, -1, 1, 1)
        return y.to(x.dtype)


class BatchNorm1d(Unchanged):
    """As in the reference."""
