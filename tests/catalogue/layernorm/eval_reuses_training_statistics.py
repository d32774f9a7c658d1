"""Mistake: a BatchNorm habit. The mean and variance of the last training batch are kept and
reused in eval mode, instead of each sample's own."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_same_in_eval_mode"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        if self.training or getattr(self, "kept", None) is None:
            mean = x.mean(dims, keepdim=True)
            var = ((x - mean) ** 2).mean(dims, keepdim=True)
            self.kept = (mean.detach().mean(), var.detach().mean())
        else:
            mean, var = self.kept
        y = (x - mean) / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight
        return y if self.bias is None else y + self.bias
