"""Mistake: a BatchNorm habit. The mean square of the last training batch is kept and reused
in eval mode, instead of each sample's own."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_same_in_eval_mode"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        if self.training or getattr(self, "kept", None) is None:
            self.kept = xf.square().mean(dims, keepdim=True).detach().mean()
        y = (
            xf * torch.rsqrt(self.kept + eps)
            if not self.training
            else xf * torch.rsqrt(xf.square().mean(dims, keepdim=True) + eps)
        )
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
