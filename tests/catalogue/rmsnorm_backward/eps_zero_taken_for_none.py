"""Mistake: `eps = eps or torch.finfo(...).eps`, so an eps of 0.0 given is taken for None and
the machine epsilon is added, where torch divides by the plain root mean square."""

import torch

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_default_eps"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        computed = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
        return Reference.forward(ctx, x, weight, eps or torch.finfo(computed).eps)


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
