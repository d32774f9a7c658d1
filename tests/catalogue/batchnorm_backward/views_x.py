"""Mistake: flattens x to (N, C, -1) with .view() in forward, which fails on an input in
another memory layout (channels last, or after a permute) that F.batch_norm takes."""

from solutions.batchnorm_backward import HALF
from solutions.batchnorm_backward import BatchNormFunction as Reference

EXPECT = "test_noncontiguous_input"


class BatchNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        flat = x.view(x.shape[0], x.shape[1], -1)  # needs a contiguous layout
        xf = flat.float() if x.dtype in HALF else flat
        mean = xf.mean((0, 2), keepdim=True)
        xc = xf - mean
        rstd = (xc.square().mean((0, 2), keepdim=True) + eps).rsqrt()
        shape = [1, -1] + [1] * (x.dim() - 2)
        x_hat = (xc * rstd).reshape(x.shape)
        ctx.save_for_backward(x_hat, rstd.reshape(shape), weight)
        return (x_hat * weight.view(shape) + bias.view(shape)).to(x.dtype)


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
