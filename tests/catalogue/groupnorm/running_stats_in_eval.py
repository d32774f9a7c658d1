"""Mistake: BatchNorm's habit: keeps the statistics of the last training call and normalizes
with them in eval mode, instead of each sample's own."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_same_in_eval_mode"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        g = x.reshape(n, self.num_groups, c // self.num_groups, -1)
        if self.training or getattr(self, "last_stats", None) is None:
            mean = g.mean((2, 3), keepdim=True)
            var = g.var((2, 3), keepdim=True, unbiased=False)
            # a plain attribute (not a buffer): the state_dict stays torch's
            self.last_stats = (mean.detach()[:1], var.detach()[:1])
        else:
            mean, var = self.last_stats
        y = ((g - mean) / torch.sqrt(var + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
