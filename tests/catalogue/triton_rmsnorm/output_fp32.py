"""Mistake: allocates the output in float32, the kernel's compute dtype, whatever x's dtype."""

import torch
import triton

from solutions.triton_rmsnorm import _rms_norm_fwd

EXPECT = "test_half_precision"


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    y = torch.empty(x2d.shape, dtype=torch.float32, device=x.device)
    block = triton.next_power_of_2(n)
    grid = (x2d.shape[0],)
    _rms_norm_fwd[grid](x2d, y, weight, x2d.stride(0), y.stride(0), n, eps, BLOCK_N=block)
    return y.view(x.shape)
