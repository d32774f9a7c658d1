"""Mistake: saves the output y = x̂ · w and uses it as x̂ in backward: the weight is counted twice."""

import torch

from solutions.rmsnorm_backward import HALF
from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_grad_weight"
ALSO = (
    "test_grad_x_through_the_weight, "
    "test_grad_x_through_the_rms, "
    "test_backward_eps_inside_sqrt, "
    "test_zero_weight_elements, "
    "test_module, "
    "test_gradcheck, "
    "test_gradients_match_autograd, "
    "test_unbatched_input"
)


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float() if x.dtype in HALF else x
        eps = torch.finfo(xf.dtype).eps if eps is None else eps
        rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
        y = xf * rstd if weight is None else xf * rstd * weight
        ctx.save_for_backward(y, rstd, weight)
        return y.to(x.dtype)


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
