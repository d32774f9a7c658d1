"""Mistake: a Python loop over the samples, one sample's groups at a time."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_vectorized"


class GroupNorm(Reference):
    def forward(self, x):
        c = x.shape[1]
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        outputs = []
        for sample in xf:  # N iterations
            groups = sample.reshape(self.num_groups, -1)
            mean = groups.mean(1, keepdim=True)
            var = (groups - mean).square().mean(1, keepdim=True)
            outputs.append(((groups - mean) * torch.rsqrt(var + self.eps)).reshape(sample.shape))
        y = torch.stack(outputs) if outputs else torch.empty_like(xf)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)
