"""Correct, written differently: splits each row across programs (a grid of rows by column
blocks); each program adds its partial sum of squares into a zeroed per-row buffer with
tl.atomic_add, and a second kernel scales each row by the total."""

import torch
import triton
import triton.language as tl

EXPECT = "pass"


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
    squares = torch.zeros(rows.shape[0], dtype=torch.float32, device=x.device)
    block = column_block(n)
    grid = (rows.shape[0], triton.cdiv(n, block))
    _square[grid](rows, squares, rows.stride(0), n, BLOCK=block)
    _scale[grid](rows, y, weight, squares, rows.stride(0), n, eps, BLOCK=block)
    return y
