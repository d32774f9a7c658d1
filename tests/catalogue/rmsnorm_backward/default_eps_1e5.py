"""Mistake: rms_norm defaults to eps=1e-5, as LLaMA's code does, not torch's eps=None (machine
epsilon)."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_default_eps"


class RMSNormFunction(Reference):
    pass


def rms_norm(x, weight=None, eps=1e-5):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps if self.eps is not None else 1e-5)
