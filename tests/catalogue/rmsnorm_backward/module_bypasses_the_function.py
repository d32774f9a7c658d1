"""Mistake: the RMSNorm module computes the formula itself with autograd, so its gradients are
not your backward's."""

import torch

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_module"


class RMSNormFunction(Reference):
    pass


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        return x * torch.rsqrt(x.square().mean(-1, keepdim=True) + eps) * self.weight
