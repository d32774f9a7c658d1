"""Mistake: running_mean made with torch.empty and never zeroed. It holds whatever the memory
held: often garbage, sometimes zeros, so the verdict would depend on the allocator's history.
During a check new memory reads as NaN, and this fails on every run.
"""

from __future__ import annotations

import math

import torch
from torch import nn

EXPECT = "test_buffers"


class _BatchNorm(nn.Module):
    """Shared logic: per-channel batch statistics, running averages, affine transform."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = nn.Parameter(torch.ones(num_features))
            self.bias = nn.Parameter(torch.zeros(num_features))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        # Buffers, not Parameters: saved in the state_dict and moved by .to(), never trained.
        if track_running_stats:
            self.register_buffer("running_mean", torch.empty(num_features))  # never zeroed
            self.register_buffer("running_var", torch.ones(num_features))
            self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def _check_input_dim(self, x: torch.Tensor) -> None:
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._check_input_dim(x)
        dims = [0, *range(2, x.dim())]  # every dim except the channel dim 1
        shape = [1, -1] + [1] * (x.dim() - 2)  # (C,) -> broadcastable against x
        if self.training or self.running_mean is None:  # normalize with batch statistics
            n = x.size(0) * math.prod(x.shape[2:])  # values per channel
            if n == 1:  # the variance of a single value is 0: the output would be all zeros
                raise ValueError(
                    "Expected more than 1 value per channel when training, "
                    f"got input size {list(x.shape)}"
                )
            mean = x.mean(dims)
            var = (x - mean.view(shape)).square().mean(dims)  # biased: the batch's own spread
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var, n)
        else:  # eval: the running estimates, so the output does not depend on the batch
            mean, var = self.running_mean, self.running_var
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)  # float32 params + half input (AMP): output keeps the input dtype

    def _update_running_stats(self, mean: torch.Tensor, var: torch.Tensor, n: int) -> None:
        self.num_batches_tracked.add_(1)
        if n == 0:  # empty batch: torch counts it but leaves the averages alone (no NaNs)
            return
        # momentum=None: cumulative moving average, every batch so far weighs the same.
        m = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        # no_grad: the buffers are statistics, not part of the graph; otherwise every step's
        # graph would stay reachable from the buffers and memory would grow without bound.
        with torch.no_grad():
            self.running_mean.mul_(1 - m).add_(m * mean)
            # Unbiased (n / (n - 1)): running_var estimates the population variance used at
            # eval, and the biased batch variance underestimates it for small batches.
            self.running_var.mul_(1 - m).add_(m * var * n / (n - 1))

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) inputs, per channel C."""

    def _check_input_dim(self, x: torch.Tensor) -> None:
        if x.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {x.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) inputs, per channel C."""

    def _check_input_dim(self, x: torch.Tensor) -> None:
        if x.dim() != 4:
            raise ValueError(f"expected 4D input (got {x.dim()}D input)")
