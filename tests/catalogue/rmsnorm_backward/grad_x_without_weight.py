"""Mistake: the gradient reaching x̂ is taken as grad_out itself, forgetting the weight."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_grad_x_through_the_weight"
ALSO = (
    "test_grad_x_through_the_rms, "
    "test_backward_eps_inside_sqrt, "
    "test_zero_weight_elements, "
    "test_without_weight, "
    "test_module, "
    "test_gradcheck, "
    "test_gradients_match_autograd, "
    "test_unbatched_input"
)


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, _ = ctx.saved_tensors
        g = grad_out
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, (grad_out * x_hat).reshape(-1, grad_out.shape[-1]).sum(0), None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
