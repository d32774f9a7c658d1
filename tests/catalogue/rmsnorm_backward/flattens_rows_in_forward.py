"""Mistake: forward flattens x to rows with x.flatten(0, -2), and backward grad_out the same
way: right for every batched x, but an unbatched x of shape (D,) has no dim -2 to flatten to,
and forward raises IndexError."""

import torch
from torch import nn

EXPECT = "test_unbatched_input"


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rows = x.flatten(0, -2)  # (rows, D); no dim -2 when x is (D,)
        rf = rows.float() if x.dtype in (torch.float16, torch.bfloat16) else rows
        if eps is None:
            eps = torch.finfo(rf.dtype).eps
        rstd = torch.rsqrt(rf.square().mean(1, keepdim=True) + eps)
        x_hat = rf * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        y = x_hat if weight is None else x_hat * weight
        return y.to(x.dtype).reshape(x.shape)

    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.flatten(0, -2).to(x_hat.dtype)
        grad_weight = None if weight is None else (dy * x_hat).sum(0).to(weight.dtype)
        g = dy if weight is None else dy * weight
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(1, keepdim=True))
        return grad_x.to(grad_out.dtype).reshape(grad_out.shape), grad_weight, None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
