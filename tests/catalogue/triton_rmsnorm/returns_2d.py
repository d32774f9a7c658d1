"""Mistake: returns the kernel's (rows, N) output without viewing it back to x's shape."""

import torch
import triton

from solutions.triton_rmsnorm import _rms_norm_fwd

EXPECT = "test_output_like_input"
ALSO = "test_leading_dims, test_row_stride"


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    y = torch.empty_like(x2d)
    block = triton.next_power_of_2(n)
    num_warps = min(max(block // 256, 1), 8)
    _rms_norm_fwd[(x2d.shape[0],)](
        x2d, y, weight, x2d.stride(0), y.stride(0), n, eps, BLOCK_N=block, num_warps=num_warps
    )
    return y
