"""Mistake: eps=None takes the machine epsilon of the input's dtype, float16's or bfloat16's for a
half input, though the statistics are computed in float32 (torch uses float32's since 2.7)."""

import torch
from torch import nn

EXPECT = "test_default_eps"


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        if eps is None:
            eps = torch.finfo(x.dtype).eps  # 9.8e-4 for float16: 8000 times float32's
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
        x_hat = xf * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return (x_hat if weight is None else x_hat * weight).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        g_out = grad_out.to(x_hat.dtype)
        grad_weight = None
        if weight is not None:
            grad_weight = (g_out * x_hat).reshape(-1, x_hat.shape[-1]).sum(0).to(weight.dtype)
        g = g_out if weight is None else g_out * weight
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x.to(grad_out.dtype), grad_weight, None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
