"""Mistake: flattens x with .view() in forward, which fails on a non-contiguous input (an
activation after a transpose) that F.rms_norm takes."""

import torch

from solutions.rmsnorm_backward import HALF
from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_noncontiguous_input"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rows = x.view(-1, x.shape[-1])  # needs a contiguous layout
        xf = rows.float() if x.dtype in HALF else rows
        eps = torch.finfo(xf.dtype).eps if eps is None else eps
        rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
        x_hat = xf * rstd
        ctx.save_for_backward(x_hat.reshape(x.shape), rstd.reshape(*x.shape[:-1], 1), weight)
        y = x_hat if weight is None else x_hat * weight
        return y.reshape(x.shape).to(x.dtype)


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
