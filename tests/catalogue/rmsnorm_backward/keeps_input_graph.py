"""Mistake: keeps x as a plain ctx attribute, which holds the input's autograd graph alive until
backward."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_saves_only_what_backward_needs"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        ctx.x = x
        return Reference.forward(ctx, x, weight, eps)


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
