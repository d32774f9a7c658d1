"""Mistake: backward all-reduces the gradients of weight and bias too, so every rank holds
their sum over the ranks; DDP then reduces them again."""

import torch.distributed as dist

from solutions.syncbatchnorm import SyncBatchNorm as Reference
from solutions.syncbatchnorm import _SyncBatchNormFunction

EXPECT = "test_parameter_gradients_are_local"
ALSO = "test_matches_batchnorm_on_the_global_batch"


class _Function(_SyncBatchNormFunction):
    @staticmethod
    def backward(ctx, grad_y):
        grads = list(_SyncBatchNormFunction.backward(ctx, grad_y))
        for g in grads[1:3]:  # every rank gets the gradient of the whole batch
            if g is not None:
                dist.all_reduce(g, group=ctx.group)
        return tuple(grads)


class SyncBatchNorm(Reference):
    def forward(self, x):
        synced = (
            self.training
            and dist.is_available()
            and dist.is_initialized()
            and dist.get_world_size(self.process_group) > 1
        )
        if not synced:
            return super().forward(x)
        m = 0.0
        if self.track_running_stats:
            self.num_batches_tracked.add_(1)
            m = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        return _Function.apply(
            x,
            self.weight,
            self.bias,
            self.running_mean,
            self.running_var,
            self.eps,
            m,
            self.process_group,
        )
