"""Mistake: launches the kernel for 2-D inputs only, and falls back to torch ops otherwise."""

import torch

from solutions.triton_rmsnorm import rms_norm as rms_norm_2d

EXPECT = "test_kernel_does_the_work"
ALSO = "test_output_like_input, test_leading_dims, test_row_stride"


def rms_norm(x, weight, eps=1e-6):
    if x.dim() == 2:
        return rms_norm_2d(x, weight, eps)
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.float()
    return y.to(x.dtype)
