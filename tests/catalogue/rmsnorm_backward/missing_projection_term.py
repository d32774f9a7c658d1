"""Mistake: drops the −x̂ · mean(g · x̂) term, so grad_x ignores that the rms depends on x:
dx = w · dy / rms only."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_grad_x_through_the_rms"
ALSO = (
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
        x_hat, rstd, weight = ctx.saved_tensors
        return (
            rstd * grad_out * weight,
            (grad_out * x_hat).reshape(-1, grad_out.shape[-1]).sum(0),
            None,
        )


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
