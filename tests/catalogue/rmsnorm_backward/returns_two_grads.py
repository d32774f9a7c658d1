"""Mistake: backward returns (grad_x, grad_weight), forgetting the None for eps."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_backward_returns_a_grad_per_input"
ALSO = (
    "test_input_unmodified, "
    "test_from_scratch, "
    "test_vectorized, "
    "test_backward_by_hand, "
    "test_grad_weight, "
    "test_grad_x_through_the_weight, "
    "test_grad_x_through_the_rms, "
    "test_backward_eps_inside_sqrt, "
    "test_zero_weight_elements, "
    "test_without_weight, "
    "test_module, "
    "test_follows_device, "
    "test_gradcheck, "
    "test_gradients_match_autograd, "
    "test_unbatched_input"
)


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        return Reference.backward(ctx, grad_out)[:2]


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
