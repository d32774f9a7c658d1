"""Mistake: backward re-runs the forward under torch.enable_grad() and asks autograd for the
gradient: it works, but it is not the exercise, and it costs a second forward."""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_backward_by_hand"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        ctx.save_for_backward(x, weight, bias)
        ctx.eps = eps
        mean = x.mean(-1, keepdim=True)
        var = (x - mean).square().mean(-1, keepdim=True)
        return (x - mean) * torch.rsqrt(var + eps) * weight + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, bias = ctx.saved_tensors
        with torch.enable_grad():
            x, weight, bias = (t.detach().requires_grad_() for t in (x, weight, bias))
            mean = x.mean(-1, keepdim=True)
            var = (x - mean).square().mean(-1, keepdim=True)
            y = (x - mean) * torch.rsqrt(var + ctx.eps) * weight + bias
            grads = torch.autograd.grad(y, (x, weight, bias), grad_out)
        return *grads, None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
