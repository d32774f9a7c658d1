"""Mistake: copies x with x.contiguous() before the launch, so that its rows are N apart: right
values, but a strided x is read and written once more, the traffic the fused kernel exists to
save."""

import triton

from solutions.fused_add_rmsnorm import _fused_add_rms_norm_fwd

EXPECT = "test_kernel_does_the_work"
ALSO = "test_row_stride"
SAYS = ".contiguous() or .clone() copies them"
RULE = "test_kernel_does_the_work"


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    n = x.shape[-1]
    rows = x.contiguous().view(-1, n)  # a copy whenever x's rows are not N apart
    y = rows.new_empty(rows.shape)
    block_n = triton.next_power_of_2(n)
    _fused_add_rms_norm_fwd[(rows.shape[0],)](
        rows, residual, y, weight, rows.stride(0), n, eps, BLOCK_N=block_n
    )
    return y.view(x.shape), residual
