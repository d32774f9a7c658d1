"""Mistake: forward computes half inputs in float32, but backward works in grad_out's dtype:
the saved x̂ and rstd are rounded to float16/bfloat16 and the compact textbook formula
dx = (w·rstd/m)(m·dy − Σdy − x̂·Σ(dy·x̂)) runs in half precision. On ordinary data that costs
an ulp or two; when grad_out has a large common offset, m·dy − Σdy cancels it in half
precision and the rounding of Σdy is all that is left."""

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_half_precision"
SAYS = "with grad_out = 384 + randn"


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, dout):
        x_hat, rstd, weight = (t.to(dout.dtype) for t in ctx.saved_tensors)
        dims, shape = _layout(dout)
        m = dout.numel() // dout.shape[1]
        dbeta = dout.sum(dims)
        dgamma = (x_hat * dout).sum(dims)
        scale = weight.view(shape) * rstd / m
        dx = scale * (m * dout - x_hat * dgamma.view(shape) - dbeta.view(shape))
        return dx, dgamma, dbeta, None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
