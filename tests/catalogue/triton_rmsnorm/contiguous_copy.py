"""Mistake: copies x with x.contiguous() before the launch, so that rows are N apart: right
values, but a strided x is read and written once more, the traffic the kernel exists to save."""

import torch
import triton

from solutions.triton_rmsnorm import _rms_norm_fwd

EXPECT = "test_kernel_does_the_work"
ALSO = "test_row_stride"
SAYS = ".contiguous() or .clone() copies them"
RULE = "test_kernel_does_the_work"


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    x2d = x.contiguous().view(-1, n)
    y = torch.empty_like(x2d)
    block = triton.next_power_of_2(n)
    _rms_norm_fwd[(x2d.shape[0],)](x2d, y, weight, n, n, n, eps, BLOCK_N=block)
    return y.view(x.shape)
