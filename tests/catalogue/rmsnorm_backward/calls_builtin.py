"""Mistake: forward calls the built-in F.rms_norm."""

import torch

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_from_scratch"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        y = torch.nn.functional.rms_norm(x, x.shape[-1:], weight, eps)
        Reference.forward(ctx, x, weight, eps)
        return y


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
