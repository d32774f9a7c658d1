"""Mistake: every operation in the input's dtype, llm.c's LayerNorm (train_gpt2.c) with its
float written as float16/bfloat16: the mean, rstd and both gradient means are rounded to half
precision. On ordinary data that costs an ulp or two; on x = 384 + randn in float16 the rounded
mean is off by up to 1/8 of the spread, and every output and gradient with it."""

import torch

EXPECT = "test_half_precision"
SAYS = "with x = 384 + randn"


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inp, weight, bias, eps):
        mean = inp.mean(-1, keepdim=True)
        xshift = inp - mean
        var = (xshift * xshift).mean(-1, keepdim=True)
        rstd = (var + eps).rsqrt()
        ctx.save_for_backward(inp, weight, mean, rstd)
        return xshift * rstd * weight + bias

    @staticmethod
    def backward(ctx, dout):
        inp, weight, mean, rstd = ctx.saved_tensors
        norm = (inp - mean) * rstd
        dnorm = weight * dout
        dnorm_mean = dnorm.mean(-1, keepdim=True)
        dnorm_norm_mean = (dnorm * norm).mean(-1, keepdim=True)
        dinp = (dnorm - dnorm_mean - norm * dnorm_norm_mean) * rstd
        d = dout.shape[-1]
        return dinp, (norm * dout).reshape(-1, d).sum(0), dout.reshape(-1, d).sum(0), None


def layer_norm(inp, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(inp, weight, bias, eps)
