"""Mistake: splits each row across programs and adds the partial sums of squares with
tl.atomic_add into a buffer made with torch.empty, not torch.zeros: the sums start from
whatever the memory held (NaN here), though every load is masked."""

import torch
import triton
import triton.language as tl

EXPECT = "test_formula"
ALSO = (
    "test_non_power_of_two_width, "
    "test_wide_rows, "
    "test_leading_dims, "
    "test_row_stride, "
    "test_half_precision"
)
SAYS = "torch.empty does not set it"


def column_block(n: int) -> int:
    return max(32, triton.next_power_of_2(triton.cdiv(n, 8)))


@triton.jit
def _square(X, SQUARES, stride_x, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    tl.atomic_add(SQUARES + row, tl.sum(x * x, axis=0))


@triton.jit
def _scale(X, Y, W, SQUARES, stride_x, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    rstd = tl.rsqrt(tl.load(SQUARES + row) / N + eps)
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    squares = torch.empty(rows.shape[0], dtype=torch.float32, device=x.device)
    block = column_block(n)
    grid = (rows.shape[0], triton.cdiv(n, block))
    _square[grid](rows, squares, rows.stride(0), n, BLOCK=block)
    _scale[grid](rows, y, weight, squares, rows.stride(0), n, eps, BLOCK=block)
    return y
