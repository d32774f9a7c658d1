"""Mistake: computes the mean square with torch ops and launches a kernel only to scale."""

import torch
import triton
import triton.language as tl

EXPECT = "test_kernel_does_the_work"
ALSO = (
    "test_input_unmodified, "
    "test_output_like_input, "
    "test_masked_last_block, "
    "test_formula, "
    "test_non_power_of_two_width, "
    "test_wide_rows, "
    "test_race_free, "
    "test_leading_dims, "
    "test_row_stride, "
    "test_fp32_accumulation, "
    "test_half_precision"
)


@triton.jit
def _scale_rows(X, Y, W, RSTD, stride_x, stride_y, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.load(RSTD + row)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride_y + cols, x * rstd * w, mask=mask)


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    rstd = torch.rsqrt(x2d.float().pow(2).mean(-1) + eps)
    y = torch.empty_like(x2d)
    block = triton.next_power_of_2(n)
    _scale_rows[(x2d.shape[0],)](x2d, y, weight, rstd, x2d.stride(0), y.stride(0), n, BLOCK_N=block)
    return y.view(x.shape)
