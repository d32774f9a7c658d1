"""LLaMA's RMSNorm (Meta's llama/model.py), adapted to the kata's constructor: the interview
answer, with LLaMA's dtype policy.

It normalizes ``x.float()``, casts back with ``.type_as(x)`` and then applies the weight: right
for float16/bfloat16, but a float64 input is rounded to float32 on the way, where torch computes
in float64. Which dtype a layer computes in is torch parity, so the interview core passes.
"""

import torch
from torch import nn

EXPECT = "test_computes_in_float64"


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        else:
            self.register_parameter("weight", None)

    def _norm(self, x):
        # LLaMA's eps is a number; eps=None here is that of its computation dtype, float32.
        eps = torch.finfo(torch.float32).eps if self.eps is None else self.eps
        dims = tuple(range(-len(self.normalized_shape), 0))
        return x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)

    def forward(self, x):
        n = len(self.normalized_shape)
        if tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(f"expected trailing shape {self.normalized_shape}, got {x.shape}")
        output = self._norm(x.float()).type_as(x)
        return output if self.weight is None else output * self.weight
