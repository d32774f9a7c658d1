"""Mistake: caches eps as a float32 tensor in a plain attribute, which .to() does not move.

Its values pass (a 0-dim tensor takes the other operand's dtype), but after .to(float64) or
.to("cuda") the module still holds a float32 tensor on the CPU that is not part of its state.
"""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_to_dtype"


class LayerNorm(Reference):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__(normalized_shape, eps, elementwise_affine, bias)
        self.eps_tensor = torch.tensor(eps)

    def forward(self, x):
        n = len(self.normalized_shape)
        if tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(f"expected trailing shape {self.normalized_shape}, got {x.shape}")
        dims = tuple(range(-n, 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        xc = xf - xf.mean(dims, keepdim=True)
        y = xc * torch.rsqrt(xc.square().mean(dims, keepdim=True) + self.eps_tensor)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)
