"""Mistake: reads the row stride from x itself (x.stride(-2)) instead of from the (rows, N)
view: right for every x with rows, an IndexError for a single vector (N,)."""

import torch
import triton

from solutions.triton_rmsnorm import _rms_norm_fwd

EXPECT = "test_single_vector"


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    y = torch.empty_like(x)
    rows = x.numel() // n
    block = triton.next_power_of_2(n)
    num_warps = min(max(block // 256, 1), 8)
    _rms_norm_fwd[(rows,)](
        x, y, weight, x.stride(-2), y.stride(-2), n, eps, BLOCK_N=block, num_warps=num_warps
    )
    return y
