"""Mistake: upcasts half precision to float32 but forgets to cast the result back."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_half_precision"


class GroupNorm(Reference):
    def forward(self, x):
        return super().forward(x.float() if x.dtype in (torch.float16, torch.bfloat16) else x)
