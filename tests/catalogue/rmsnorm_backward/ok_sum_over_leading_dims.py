"""Correct: grad_weight sums over the leading dims, tuple(range(x.dim() - 1)), only where there
are some; an unbatched x of shape (D,) is its own one row, and its term is grad_weight as it
is. Written without the reference: the LLaMA-style forward, and a module of its own."""

import torch
from torch import nn

EXPECT = "pass"


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        compute = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
        if eps is None:
            eps = torch.finfo(compute).eps
        xf = x.to(compute)
        inv_rms = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
        normed = xf * inv_rms
        ctx.save_for_backward(normed, inv_rms, weight)
        return (normed if weight is None else normed * weight).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        normed, inv_rms, weight = ctx.saved_tensors
        dy = grad_out.to(normed.dtype)
        grad_weight = None
        if weight is not None:
            term = dy * normed
            leading = tuple(range(dy.dim() - 1))
            grad_weight = (term.sum(dim=leading) if leading else term).to(weight.dtype)
            dy = dy * weight
        grad_x = inv_rms * (dy - normed * (dy * normed).mean(-1, keepdim=True))
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
        self.weight = nn.Parameter(torch.ones(normalized_shape)) if elementwise_affine else None

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
