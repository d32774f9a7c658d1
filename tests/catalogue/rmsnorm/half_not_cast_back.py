"""Mistake: upcasts half precision to float32 but forgets to cast the result back."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_half_precision"


class RMSNorm(Reference):
    def forward(self, x):
        return super().forward(x.float() if x.dtype in (torch.float16, torch.bfloat16) else x)
