"""Correct, written differently: one differentiable all_reduce of [Σx, Σx², n]; autograd
does the backward (its all_reduce runs the gradients through the same collective)."""

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn
from torch import nn

EXPECT = "pass"


class SyncBatchNorm(nn.Module):
    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        process_group=None,
    ):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        self.process_group = process_group
        self.weight = nn.Parameter(torch.ones(num_features)) if affine else None
        self.bias = nn.Parameter(torch.zeros(num_features)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", torch.zeros(num_features))
            self.register_buffer("running_var", torch.ones(num_features))
            self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def forward(self, x):
        dims = [0] + list(range(2, x.dim()))
        shape = [1, -1] + [1] * (x.dim() - 2)
        c = x.size(1)
        if self.training or self.running_mean is None:
            n = x.numel() // c
            stats = torch.cat([x.sum(dims), (x * x).sum(dims), x.new_tensor([float(n)])])
            if (
                self.training
                and dist.is_available()
                and dist.is_initialized()
                and dist.get_world_size(self.process_group) > 1
            ):
                stats = dist_fn.all_reduce(stats, group=self.process_group)
            count = stats[-1]
            mean = stats[:c] / count
            var = stats[c : 2 * c] / count - mean * mean
            if self.training and self.track_running_stats:
                self.num_batches_tracked += 1
                m = 1 / self.num_batches_tracked.item() if self.momentum is None else self.momentum
                with torch.no_grad():
                    self.running_mean.lerp_(mean, m)
                    self.running_var.lerp_(var * count / (count - 1), m)
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
