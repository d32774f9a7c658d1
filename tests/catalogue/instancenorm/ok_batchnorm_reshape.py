"""Correct, written differently: torch's own trick by hand. The (N, C, ...) input is viewed as
one sample of N·C channels, normalized with batch-norm maths (statistics per channel), and the
running statistics are repeated N times, updated, then averaged back over N, as ATen does."""

import warnings

import torch
from torch import nn

EXPECT = "pass"


class _Norm(nn.Module):
    ranks: tuple[int, int] = (0, 0)  # (unbatched, batched)

    def __init__(
        self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False
    ):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = nn.Parameter(torch.ones(num_features)) if affine else None
        self.bias = nn.Parameter(torch.zeros(num_features)) if affine else None
        for name, value in (
            ("running_mean", torch.zeros(num_features)),
            ("running_var", torch.ones(num_features)),
            ("num_batches_tracked", torch.tensor(0, dtype=torch.long)),
        ):
            self.register_buffer(name, value if track_running_stats else None)

    def forward(self, x):
        if x.dim() not in self.ranks:
            raise ValueError(
                f"expected {self.ranks[0]}D or {self.ranks[1]}D input (got {x.dim()}D input)"
            )
        unbatched = x.dim() == self.ranks[0]
        c = x.size(0 if unbatched else 1)
        if c != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size to match num_features ({self.num_features})"
                )
            warnings.warn("input's channels do not match num_features", UserWarning, stacklevel=2)
        if unbatched:
            x = x.unsqueeze(0)
        n = x.size(0)
        dtype = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
        flat = x.to(dtype).reshape(1, n * c, -1)  # one sample, N·C channels, m positions
        m = flat.size(2)
        use_input = self.training or not self.track_running_stats
        if use_input:
            if m == 1:
                raise ValueError(
                    f"Expected more than 1 spatial element when training, got {x.size()}"
                )
            mean = flat.sum(2, keepdim=True) / m
            var = ((flat - mean) ** 2).sum(2, keepdim=True) / m
            if self.training and self.track_running_stats:
                k = 0.0 if self.momentum is None else self.momentum
                with torch.no_grad():
                    rm = self.running_mean.repeat(n) * (1 - k) + k * mean.flatten()
                    rv = self.running_var.repeat(n) * (1 - k) + k * var.flatten() * m / (m - 1)
                    self.running_mean.copy_(rm.view(n, c).mean(0))
                    self.running_var.copy_(rv.view(n, c).mean(0))
        else:
            mean = self.running_mean.repeat(n).view(1, n * c, 1)
            var = self.running_var.repeat(n).view(1, n * c, 1)
        out = (flat - mean) / torch.sqrt(var + self.eps)
        if self.affine:
            out = out * self.weight.repeat(n).view(1, n * c, 1) + self.bias.repeat(n).view(
                1, n * c, 1
            )
        out = out.reshape(x.shape).to(x.dtype)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_Norm):
    ranks = (2, 3)


class InstanceNorm2d(_Norm):
    ranks = (3, 4)
