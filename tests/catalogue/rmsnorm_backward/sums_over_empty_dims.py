"""Mistake: grad_weight sums over tuple(range(x.dim() - 1)), the leading dims, as three of five
independently written backwards did: for an unbatched x of shape (D,) that is (), torch's
.sum(dim=()) sums over every dim, and the gradient comes out a scalar, which autograd rejects.
Every batched input is right: the interview core passes."""

import torch
from torch import nn

EXPECT = "test_unbatched_input"


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        if eps is None:
            eps = torch.finfo(xf.dtype).eps
        rstd = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
        x_hat = xf * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        out = x_hat if weight is None else x_hat * weight
        return out.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        grad_weight = None
        if weight is not None:
            batch_dims = tuple(range(dy.dim() - 1))  # () for x of shape (D,)
            grad_weight = torch.sum(dy * x_hat, dim=batch_dims).to(weight.dtype)
            dy_hat = dy * weight
        else:
            dy_hat = dy
        proj = (dy_hat * x_hat).mean(dim=-1, keepdim=True)
        grad_x = rstd * (dy_hat - x_hat * proj)
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
