"""Mistake: divides the sum of squares by the block size instead of the row's width N."""

import torch
import triton
import triton.language as tl

EXPECT = "test_non_power_of_two_width"
ALSO = "test_wide_rows, test_row_stride, test_half_precision"


@triton.jit
def _rms_norm_fwd(X, Y, W, stride_x, stride_y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / BLOCK_N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride_y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    y = torch.empty_like(x2d)
    block = triton.next_power_of_2(n)
    grid = (x2d.shape[0],)
    _rms_norm_fwd[grid](x2d, y, weight, x2d.stride(0), y.stride(0), n, eps, BLOCK_N=block)
    return y.view(x.shape)
