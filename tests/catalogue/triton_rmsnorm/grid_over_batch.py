"""Mistake: launches x.shape[0] programs, the batch size, instead of one per row of x."""

import torch
import triton

from solutions.triton_rmsnorm import _rms_norm_fwd

EXPECT = "test_leading_dims"
ALSO = "test_row_stride"


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    y = torch.empty_like(x2d)
    block = triton.next_power_of_2(n)
    _rms_norm_fwd[(x.shape[0],)](x2d, y, weight, x2d.stride(0), y.stride(0), n, eps, BLOCK_N=block)
    return y.view(x.shape)
