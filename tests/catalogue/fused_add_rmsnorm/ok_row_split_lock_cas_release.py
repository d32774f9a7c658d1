"""Correct, written differently: splits each row across programs (a grid of rows by column
blocks), and each program adds its partial sum of squares into a per-row buffer under a
per-row spin lock, taken with tl.atomic_cas(lock, 0, 1) until it succeeds and released with
tl.atomic_cas(lock, 1, 0); a second kernel scales each row by the total."""

import torch
import triton
import triton.language as tl

EXPECT = "pass"


def column_block(n: int) -> int:
    """Columns per program: 8 programs a row, 32 columns at least, so that every row checked
    spans two programs or more (and the widest, 16384, no more than 8 in the interpreter)."""
    return max(32, triton.next_power_of_2(triton.cdiv(n, 8)))


@triton.jit
def _add_and_square(X, R, SQUARES, LOCKS, stride_x, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    h = (x + r).to(R.dtype.element_ty)
    tl.store(R + row * N + cols, h, mask=mask)
    h = h.to(tl.float32)
    while tl.atomic_cas(LOCKS + row, 0, 1) == 1:
        pass
    tl.store(SQUARES + row, tl.load(SQUARES + row) + tl.sum(h * h, axis=0))
    tl.debug_barrier()
    tl.atomic_cas(LOCKS + row, 1, 0)  # the holder's release


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
    squares = torch.zeros(rows.shape[0], dtype=torch.float32, device=x.device)
    locks = torch.zeros(rows.shape[0], dtype=torch.int32, device=x.device)
    block = column_block(n)
    grid = (rows.shape[0], triton.cdiv(n, block))
    _add_and_square[grid](rows, residual, squares, locks, rows.stride(0), n, BLOCK=block)
    _scale[grid](residual, y, weight, squares, n, eps, BLOCK=block)
    return y, residual
