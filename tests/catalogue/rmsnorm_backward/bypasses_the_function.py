"""Mistake: rms_norm computes the formula itself, so autograd, not the hand-written backward,
gives the gradient."""

import torch

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_is_an_autograd_function"
ALSO = "test_saves_only_what_backward_needs, test_module"


class RMSNormFunction(Reference):
    pass


def rms_norm(x, weight=None, eps=None):
    eps = torch.finfo(x.dtype).eps if eps is None else eps
    y = x * torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
    return y if weight is None else y * weight


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
