"""Correct, written differently: moves channels last and flattens to (m, C) rows first."""

import torch

EXPECT = "pass"


def _rows(t):
    """(N, C, *) -> (N·*, C), and a way back."""
    moved = t.movedim(1, -1)
    return moved.reshape(-1, t.shape[1]), moved.shape


class BatchNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        rows, moved_shape = _rows(x.float() if x.dtype in (torch.float16, torch.bfloat16) else x)
        centred = rows - rows.mean(0)
        inv_std = 1.0 / torch.sqrt(centred.pow(2).mean(0) + eps)
        normed = centred * inv_std
        ctx.save_for_backward(normed, inv_std, weight)
        y = (normed * weight + bias).reshape(moved_shape).movedim(-1, 1)
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        normed, inv_std, weight = ctx.saved_tensors
        dy, moved_shape = _rows(grad_out.to(normed.dtype))
        g = dy * weight
        grad_rows = inv_std * (g - g.mean(0) - normed * (g * normed).mean(0))
        grad_x = grad_rows.reshape(moved_shape).movedim(-1, 1).to(grad_out.dtype)
        grad_w = (dy * normed).sum(0).to(weight.dtype)
        return grad_x, grad_w, dy.sum(0).to(weight.dtype), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
