"""Mistake: normalizes one channel at a time in a Python loop, with its group's statistics."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_vectorized"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        dtype, half = x.dtype, x.dtype in (torch.float16, torch.bfloat16)
        size = c // self.num_groups
        x = x.float() if half else x
        groups = x.reshape(n, self.num_groups, -1) if n else x.reshape(0, self.num_groups, 1)
        mean = groups.mean(2)
        rstd = torch.rsqrt((groups - mean.unsqueeze(2)).square().mean(2) + self.eps)
        channels = []
        for ch in range(c):  # C iterations
            g = ch // size
            shape = (n,) + (1,) * (x.dim() - 2)
            y = (x[:, ch] - mean[:, g].view(shape)) * rstd[:, g].view(shape)
            if self.affine:
                y = y * self.weight[ch] + self.bias[ch]
            channels.append(y)
        return torch.stack(channels, dim=1).to(dtype)
