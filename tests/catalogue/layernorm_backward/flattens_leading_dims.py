"""Mistake: backward flattens the leading dims with .flatten(0, -2) to sum grad_weight and
grad_bias over the rows: right for every batched x, but an unbatched x of shape (D,) has no
dim -2, and backward raises IndexError."""

import torch

EXPECT = "test_unbatched_input"


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        mu = xf.mean(-1, keepdim=True)
        rstd = torch.rsqrt((xf - mu).pow(2).mean(-1, keepdim=True) + eps)
        xh = (xf - mu) * rstd
        ctx.save_for_backward(xh, rstd, weight)
        return (xh * weight + bias).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        xh, rstd, weight = ctx.saved_tensors
        dy = grad_out.to(xh.dtype)
        dw = (dy * xh).flatten(0, -2).sum(0)  # no dim -2 when x is (D,)
        db = dy.flatten(0, -2).sum(0)
        g = dy * weight
        dx = rstd * (g - g.mean(-1, keepdim=True) - xh * (g * xh).mean(-1, keepdim=True))
        return dx.to(grad_out.dtype), dw.to(weight.dtype), db.to(weight.dtype), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
