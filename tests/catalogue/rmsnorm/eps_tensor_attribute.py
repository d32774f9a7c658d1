"""Mistake: caches eps as a float32 tensor in a plain attribute, which .to() does not move.

Its values pass (a 0-dim tensor takes the other operand's dtype), but after .to(float64) or
.to("cuda") the module still holds a float32 tensor on the CPU that is not part of its state.
"""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_to_dtype"


class RMSNorm(Reference):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__(normalized_shape, eps, elementwise_affine)
        self.eps_tensor = None if eps is None else torch.tensor(eps)

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps_tensor is None else self.eps_tensor
        y = xf * torch.rsqrt(xf.square().mean(dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
