"""Correct, written differently: channels moved first and flattened, var_mean, lerp_ updates."""

import torch
from torch import nn

EXPECT = "pass"


class _Norm(nn.Module):
    ranks: tuple[int, ...] = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        self.weight = nn.Parameter(torch.ones(num_features)) if affine else None
        self.bias = nn.Parameter(torch.zeros(num_features)) if affine else None
        for name, value in (
            ("running_mean", torch.zeros(num_features)),
            ("running_var", torch.ones(num_features)),
            ("num_batches_tracked", torch.tensor(0, dtype=torch.long)),
        ):
            self.register_buffer(name, value if track_running_stats else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() not in self.ranks:
            wanted = " or ".join(f"{r}D" for r in self.ranks)
            raise ValueError(f"expected {wanted} input (got {x.dim()}D input)")
        c = x.size(1)
        n = x.numel() // c
        flat = x.transpose(0, 1).reshape(c, n)  # (C, everything else)
        if self.training or not self.track_running_stats:
            if n == 1:
                raise ValueError(
                    "Expected more than 1 value per channel when training, "
                    f"got input size {x.size()}"
                )
            var, mean = torch.var_mean(flat, dim=1, correction=0)
            if self.training and self.track_running_stats:
                self.num_batches_tracked += 1
                if n > 0:
                    if self.momentum is None:
                        factor = 1.0 / self.num_batches_tracked.item()
                    else:
                        factor = self.momentum
                    with torch.no_grad():
                        unbiased = var * (n / (n - 1))
                        self.running_mean.lerp_(mean.to(self.running_mean.dtype), factor)
                        self.running_var.lerp_(unbiased.to(self.running_var.dtype), factor)
        else:
            mean, var = self.running_mean, self.running_var
        out = (flat - mean[:, None]) / torch.sqrt(var[:, None] + self.eps)
        if self.affine:
            out = torch.addcmul(self.bias[:, None], out, self.weight[:, None])
        moved = x.transpose(0, 1).shape
        return out.reshape(moved).transpose(0, 1).to(x.dtype)


class BatchNorm1d(_Norm):
    ranks = (2, 3)


class BatchNorm2d(_Norm):
    ranks = (4,)
