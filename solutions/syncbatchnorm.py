"""Reference solution: SyncBatchNorm from scratch (a drop-in for torch.nn.SyncBatchNorm)."""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn


class _SyncBatchNormFunction(torch.autograd.Function):
    """Batch norm with the global batch's statistics: one all_gather forward, one all_reduce
    backward (torch's algorithm)."""

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, momentum, group):
        dims, shape, c = [0, *range(2, x.dim())], [1, -1] + [1] * (x.dim() - 2), x.size(1)
        # Each rank's count, mean and sum of squared deviations (M2), centred on its own mean so
        # that float32 keeps its digits. An empty rank sends zeros: it must still take part.
        n = x.numel() // c
        mean = x.sum(dims) / max(n, 1)
        m2 = (x - mean.view(shape)).square().sum(dims)
        local = torch.cat([mean.new_full((1,), n), mean, m2])
        # Gather, not all_reduce the means: the ranks' batches can differ in size.
        gathered = [torch.empty_like(local) for _ in range(dist.get_world_size(group))]
        dist.all_gather(gathered, local, group=group)
        counts, means, m2s = torch.stack(gathered).split([1, c, c], dim=1)
        total = counts.sum()
        mean = (counts * means).sum(0) / total
        # Chan et al.: the spread within each rank plus that of the rank means around the mean.
        var = (m2s + counts * (means - mean).square()).sum(0) / total
        if running_mean is not None:  # forward runs without autograd: plain in-place updates
            running_mean.mul_(1 - momentum).add_(momentum * mean)
            # Unbiased with the global count: an estimate of the data's variance, for eval.
            running_var.mul_(1 - momentum).add_(momentum * var * total / (total - 1))
        invstd = torch.rsqrt(var + eps)
        x_hat = (x - mean.view(shape)) * invstd.view(shape)
        ctx.save_for_backward(x_hat, invstd, weight)
        ctx.total, ctx.group = total, group
        if weight is None:
            return x_hat
        return x_hat * weight.view(shape) + bias.view(shape)

    @staticmethod
    def backward(ctx, grad_y):
        x_hat, invstd, weight = ctx.saved_tensors
        dims, shape = [0, *range(2, x_hat.dim())], [1, -1] + [1] * (x_hat.dim() - 2)
        grad_x = grad_weight = grad_bias = None
        if weight is not None:  # this rank's share: DDP all-reduces parameter gradients itself
            grad_weight, grad_bias = (grad_y * x_hat).sum(dims), grad_y.sum(dims)
        if ctx.needs_input_grad[0]:
            g = grad_y if weight is None else grad_y * weight.view(shape)
            # The mean and variance depend on every rank's x: their terms sum over all ranks.
            sums = torch.cat([g.sum(dims), (g * x_hat).sum(dims)])
            dist.all_reduce(sums, group=ctx.group)
            mean_g, mean_g_x_hat = (sums / ctx.total).view(2, -1)
            grad_x = invstd.view(shape) * (
                g - mean_g.view(shape) - x_hat * mean_g_x_hat.view(shape)
            )
        return grad_x, grad_weight, grad_bias, None, None, None, None, None


class SyncBatchNorm(nn.Module):
    """BatchNorm whose training statistics are those of the batch over all ranks."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: dist.ProcessGroup | None = None,
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.process_group = process_group  # None: the default group, every rank
        if affine:
            self.weight = nn.Parameter(torch.ones(num_features))
            self.bias = nn.Parameter(torch.zeros(num_features))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", torch.zeros(num_features))
            self.register_buffer("running_var", torch.ones(num_features))
            self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        momentum = 0.0
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            m = self.momentum  # None: a cumulative average, every batch weighs the same
            momentum = 1.0 / float(self.num_batches_tracked) if m is None else m
        # Only training synchronises: eval uses the running statistics (the same on every
        # rank already), and ranks may evaluate different numbers of batches.
        if (
            self.training
            and dist.is_available()
            and dist.is_initialized()
            and dist.get_world_size(self.process_group) > 1
        ):
            tracked = self.track_running_stats
            return _SyncBatchNormFunction.apply(
                x, self.weight, self.bias, self.running_mean if tracked else None,
                self.running_var if tracked else None, self.eps, momentum, self.process_group,
            )  # fmt: skip
        return self._local(x, momentum)

    def _local(self, x: torch.Tensor, momentum: float) -> torch.Tensor:
        """Plain BatchNorm on this rank's batch: one process, or eval mode."""
        dims, shape = [0, *range(2, x.dim())], [1, -1] + [1] * (x.dim() - 2)
        if self.training or self.running_mean is None:
            mean = x.mean(dims)
            var = (x - mean.view(shape)).square().mean(dims)
            if self.training and self.track_running_stats:
                n = x.numel() // x.size(1)
                with torch.no_grad():
                    self.running_mean.mul_(1 - momentum).add_(momentum * mean)
                    self.running_var.mul_(1 - momentum).add_(momentum * var * n / (n - 1))
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
