"""Mistake: drops exactly round(p · n) elements, chosen by torch.randperm: every element is
dropped with probability p, but the number dropped never varies, and at p · n < 0.5 nothing is
ever dropped. Independent draws drop a binomial number."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_elements_dropped_independently"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        dropped = torch.randperm(x.numel(), device=x.device)[: round(self.p * x.numel())]
        mask = torch.ones(x.numel(), dtype=x.dtype, device=x.device)
        mask[dropped] = 0
        mask = mask.view(x.shape) * scale
        return x.mul_(mask) if self.inplace else x * mask
