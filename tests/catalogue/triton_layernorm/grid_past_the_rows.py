"""Mistake: forward launches two programs more than there are rows, and nothing stops them:
those programs read and write rows past the end of x, y, mean and rstd.
"""

import torch
import triton

from solutions.triton_layernorm import LayerNorm as Module
from solutions.triton_layernorm import LayerNormFunction as Reference
from solutions.triton_layernorm import _layer_norm_fwd, _warps

EXPECT = "test_masked_tail"
ALSO = (
    "test_kernels_do_the_work, "
    "test_input_unmodified, "
    "test_gradient_shapes, "
    "test_forward_formula, "
    "test_saves_mean_and_rstd, "
    "test_grad_x_through_the_mean, "
    "test_grad_x_through_the_variance, "
    "test_grad_x, "
    "test_grad_weight_and_bias, "
    "test_reduction_keeps_every_row, "
    "test_half_precision, "
    "test_wide_rows"
)


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        m = x2d.shape[0]
        y = torch.empty((m, n), dtype=x.dtype, device=x.device)
        mean = torch.empty(m, dtype=torch.float32, device=x.device)
        rstd = torch.empty(m, dtype=torch.float32, device=x.device)
        block_n = triton.next_power_of_2(n)
        _layer_norm_fwd[(m + 2,)](  # two programs past the last row, unmasked
            x2d, y, weight, bias, mean, rstd, x2d.stride(0), y.stride(0), n, eps,
            BLOCK_N=block_n, num_warps=_warps(block_n),
        )  # fmt: skip
        ctx.save_for_backward(x2d, weight, mean, rstd)
        return y.view(x.shape)


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)


class LayerNorm(Module):
    def forward(self, x):
        return layer_norm(x, self.weight, self.bias, self.eps)
