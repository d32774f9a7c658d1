"""Mistake: flattens x with .view() in forward, which fails on a non-contiguous input (an
activation after a transpose) that F.layer_norm takes."""

from solutions.layernorm_backward import HALF
from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_noncontiguous_input"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        rows = x.view(-1, x.shape[-1])  # needs a contiguous layout
        xf = rows.float() if x.dtype in HALF else rows
        xc = xf - xf.mean(-1, keepdim=True)
        rstd = (xc.square().mean(-1, keepdim=True) + eps).rsqrt()
        x_hat = (xc * rstd).reshape(x.shape)
        ctx.save_for_backward(x_hat, rstd.reshape(*x.shape[:-1], 1), weight)
        return (x_hat * weight + bias).to(x.dtype)


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
