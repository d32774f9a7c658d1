"""Mistake: upcasts half precision to float32 but forgets to cast the result back."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_half_precision"


class LayerNorm(Reference):
    def forward(self, x):
        return super().forward(x.float() if x.dtype in (torch.float16, torch.bfloat16) else x)
