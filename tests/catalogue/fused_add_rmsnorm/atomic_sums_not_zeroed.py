"""Mistake: the row split across programs of ok_row_split_atomic.py, whose partial sums of
squares are added with tl.atomic_add into a buffer from torch.empty, never zeroed: the sums
start from whatever the memory held (NaN during a check). Every load has other=0.0, so the
report must not blame masked lanes."""

import torch
import triton
import triton.language as tl

EXPECT = "test_formula"
ALSO = (
    "test_non_power_of_two_width, "
    "test_wide_rows, "
    "test_leading_dims, "
    "test_row_stride, "
    "test_half_precision, "
    "test_residual_rounded_before_norm"
)
SAYS = "memory read before it was written"


def column_block(n: int) -> int:
    """Columns per program: 8 programs a row, 32 columns at least, so that every row checked
    spans two programs or more (and the widest, 16384, no more than 8 in the interpreter)."""
    return max(32, triton.next_power_of_2(triton.cdiv(n, 8)))


@triton.jit
def _add_and_square(X, R, SQUARES, stride_x, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    h = (x + r).to(R.dtype.element_ty)
    tl.store(R + row * N + cols, h, mask=mask)
    h = h.to(tl.float32)
    tl.atomic_add(SQUARES + row, tl.sum(h * h, axis=0))


@triton.jit
def _scale(R, Y, W, SQUARES, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    rstd = tl.rsqrt(tl.load(SQUARES + row) / N + eps)
    h = tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (h * rstd * w).to(Y.dtype.element_ty), mask=mask)


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    y = torch.empty_like(residual)
    squares = torch.empty(rows.shape[0], dtype=torch.float32, device=x.device)  # not zeroed
    block = column_block(n)
    grid = (rows.shape[0], triton.cdiv(n, block))
    _add_and_square[grid](rows, residual, squares, rows.stride(0), n, BLOCK=block)
    _scale[grid](residual, y, weight, squares, n, eps, BLOCK=block)
    return y, residual
