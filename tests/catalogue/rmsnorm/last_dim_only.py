"""Mistake: normalizes over the last dimension only, whatever normalized_shape says."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_multidim_normalized_shape"
ALSO = "test_gradients_match"


class RMSNorm(Reference):
    def forward(self, x):
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
