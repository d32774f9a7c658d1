"""Mistake: a Python loop over the rows in backward, one row's gradient at a time."""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_vectorized"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        d = grad_out.shape[-1]
        dy, xh, r = grad_out.reshape(-1, d), x_hat.reshape(-1, d), rstd.reshape(-1, 1)
        rows = []
        for i in range(dy.shape[0]):
            g = dy[i] * weight
            rows.append(r[i] * (g - g.mean() - xh[i] * (g * xh[i]).mean()))
        grad_x = torch.stack(rows).reshape(grad_out.shape) if rows else grad_out * 0
        return grad_x, (dy * xh).sum(0), dy.sum(0), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
