"""Mistake: moves the weight pointer along with the row, as for X and Y, so every row after the
first reads the wrong weights."""

import torch
import triton
import triton.language as tl

EXPECT = "test_masked_last_block"
ALSO = (
    "test_kernel_does_the_work, "
    "test_input_unmodified, "
    "test_output_like_input, "
    "test_formula, "
    "test_non_power_of_two_width, "
    "test_wide_rows, "
    "test_race_free, "
    "test_leading_dims, "
    "test_row_stride, "
    "test_fp32_accumulation, "
    "test_half_precision"
)
SAYS = "after the end of the weight"
COMPILED = "test_formula"  # compiled, the reads past the weight show as wrong values


@triton.jit
def _rms_norm_fwd(X, Y, W, stride_x, stride_y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride_x
    Y += row * stride_y
    W += row * stride_x
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    y = torch.empty_like(x2d)
    block = triton.next_power_of_2(n)
    grid = (x2d.shape[0],)
    _rms_norm_fwd[grid](x2d, y, weight, x2d.stride(0), y.stride(0), n, eps, BLOCK_N=block)
    return y.view(x.shape)
