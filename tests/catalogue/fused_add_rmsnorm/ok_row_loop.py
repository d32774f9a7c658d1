"""Correct, written differently: a fixed block of 1024 and two loops over the row, as vLLM's
kernel and Liger-Kernel's do for wide rows. The first adds, stores the rounded sum and sums its
squares; the second reads the stored sum back, which is the rounded value by construction."""

import torch
import triton
import triton.language as tl

EXPECT = "pass"


@triton.jit
def _add_norm(X, R, Y, W, stride_x, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, r_row, y_row = X + row * stride_x, R + row * N, Y + row * N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(r_row + cols, (x + r).to(R.dtype.element_ty), mask=mask)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        h = tl.load(r_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += h * h
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        h = tl.load(r_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (h * rstd * w).to(Y.dtype.element_ty), mask=mask)


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    n = x.shape[-1]
    rows = x.view(-1, n)
    y = torch.empty_like(residual)
    _add_norm[(rows.shape[0],)](rows, residual, y, weight, rows.stride(0), n, eps, BLOCK=1024)
    return y, residual
