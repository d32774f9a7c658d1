"""Mistake: backward removes x̂ · mean(g · x̂) with the mean over every element of the batch,
not each row's own. Right for a single row, and wherever every row happens to have the same
mean(g · x̂); wrong for any batch of rows otherwise."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_grad_x_through_the_rms"
ALSO = (
    "test_backward_eps_inside_sqrt, "
    "test_zero_weight_elements, "
    "test_without_weight, "
    "test_module, "
    "test_gradcheck, "
    "test_gradients_match_autograd"
)


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        grad_weight = None
        if weight is not None:
            grad_weight = (dy * x_hat).reshape(-1, dy.shape[-1]).sum(0).to(weight.dtype)
        g = dy if weight is None else dy * weight
        grad_x = rstd * (g - x_hat * (g * x_hat).mean())  # the mistake: one mean for all rows
        return grad_x.to(grad_out.dtype), grad_weight, None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
