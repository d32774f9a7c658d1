"""Mistake: launches the kernel for rows up to 8192 wide only, and hands wider rows to torch
(x.float(), pow, mean, rsqrt, ...): every value is right, and none of it is the kernel's work."""

import torch

from solutions.triton_rmsnorm import rms_norm as rms_norm_kernel

EXPECT = "test_kernel_does_the_work"
ALSO = "test_wide_rows, test_race_free"
SAYS = "outside the kernel, rms_norm ran aten.pow"
RULE = "test_kernel_does_the_work"


def rms_norm(x, weight, eps=1e-6):
    if x.shape[-1] <= 8192:
        return rms_norm_kernel(x, weight, eps)
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.float()
    return y.to(x.dtype)
