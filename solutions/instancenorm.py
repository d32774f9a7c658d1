"""Reference solution: InstanceNorm1d / InstanceNorm2d from scratch (drop-ins for torch.nn)."""

from __future__ import annotations

import math
import warnings

import torch
from torch import nn


class _InstanceNorm(nn.Module):
    """Shared logic: per-sample, per-channel statistics; optional affine and running stats."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
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
        if track_running_stats:
            self.register_buffer("running_mean", torch.zeros(num_features))
            self.register_buffer("running_var", torch.ones(num_features))
            # Never incremented by instance norm: kept so torch's state_dict loads both ways.
            self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def _check_input_dim(self, x: torch.Tensor) -> None:
        raise NotImplementedError

    def _get_no_batch_dim(self) -> int:
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._check_input_dim(x)
        feature_dim = x.dim() - self._get_no_batch_dim()  # 1 if batched, 0 if not
        if x.size(feature_dim) != self.num_features:
            if self.affine:  # weight and bias could not broadcast
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features"
                    f" ({self.num_features}), but got: {x.size(feature_dim)}."
                )
            # Without affine (and running stats) num_features is unused: torch only warns.
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. "
                "You can silence this warning by not passing in num_features, "
                "which is not used because affine=False",
                stacklevel=2,
            )
        if feature_dim == 0:  # unbatched (C, L) or (C, H, W): a batch of one sample
            return self._normalize(x.unsqueeze(0)).squeeze(0)
        return self._normalize(x)

    def _normalize(self, x: torch.Tensor) -> torch.Tensor:
        dims = tuple(range(2, x.dim()))  # the spatial dims: one mean per (sample, channel)
        shape = (1, -1) + (1,) * (x.dim() - 2)  # (C,) -> broadcastable along dim 1
        # Half inputs are computed in float32, as torch does; float64 stays float64.
        half = x.dtype in (torch.float16, torch.bfloat16)
        xc = x.float() if half else x
        if self.training or not self.track_running_stats:
            m = math.prod(x.shape[2:])  # values per (sample, channel)
            if m == 1:  # its variance is 0: the output would be all zeros
                raise ValueError(
                    f"Expected more than 1 spatial element when training, got input size {x.size()}"
                )
            mean = xc.mean(dims, keepdim=True)
            var = (xc - mean).square().mean(dims, keepdim=True)  # biased: divide by m
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var, m)
        else:  # eval with running stats: the same (C,) statistics for every sample
            mean, var = self.running_mean.view(shape), self.running_var.view(shape)
        y = (xc - mean) * torch.rsqrt(var + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)

    def _update_running_stats(self, mean: torch.Tensor, var: torch.Tensor, m: int) -> None:
        if self.momentum is None:  # torch hands momentum 0 to F.instance_norm: nothing moves
            return
        momentum = self.momentum
        # Each sample's statistics are folded in as BatchNorm would fold a batch's (variance
        # made unbiased over its m values), then averaged over the batch: the average of the
        # N updated copies is the update with the batch-averaged statistics.
        with torch.no_grad():
            batch_mean = mean.mean(0).flatten()
            batch_var = (var * (m / (m - 1))).mean(0).flatten()
            self.running_mean.mul_(1 - momentum).add_(momentum * batch_mean)
            self.running_var.mul_(1 - momentum).add_(momentum * batch_var)

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over (N, C, L) inputs, or one unbatched (C, L) sample."""

    def _get_no_batch_dim(self) -> int:
        return 2

    def _check_input_dim(self, x: torch.Tensor) -> None:
        if x.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {x.dim()}D input)")


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over (N, C, H, W) inputs, or one unbatched (C, H, W) sample."""

    def _get_no_batch_dim(self) -> int:
        return 3

    def _check_input_dim(self, x: torch.Tensor) -> None:
        if x.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {x.dim()}D input)")
