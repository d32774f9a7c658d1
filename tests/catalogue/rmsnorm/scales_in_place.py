"""Mistake: rescales the input in place (x.mul_(rstd)), overwriting the caller's tensor."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_input_unmodified"
ALSO = "test_gradients_match"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = xf.mul_(torch.rsqrt(xf.square().mean(dims, keepdim=True) + eps))
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
