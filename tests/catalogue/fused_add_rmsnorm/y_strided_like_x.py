"""Mistake: allocates y with x's strides (torch.empty_strided) and writes it at x's row stride:
the values are right, but where x is a slice of a wider buffer y's rows lie as far apart as
x's, where the contract has a new contiguous y, its rows N apart."""

import torch
import triton
import triton.language as tl

EXPECT = "test_row_stride"
SAYS = "y is a new contiguous tensor, its rows N apart"


@triton.jit
def _fused_add_rms_norm_fwd(X, R, Y, W, stride_x, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    h = (x + r).to(R.dtype.element_ty)
    tl.store(R + row * N + cols, h, mask=mask)
    h = h.to(tl.float32)
    rstd = tl.rsqrt(tl.sum(h * h, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride_x + cols, (h * rstd * w).to(Y.dtype.element_ty), mask=mask)


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    y = torch.empty_strided(rows.shape, rows.stride(), dtype=x.dtype, device=x.device)
    block_n = triton.next_power_of_2(n)
    _fused_add_rms_norm_fwd[(rows.shape[0],)](
        rows, residual, y, weight, rows.stride(0), n, eps, BLOCK_N=block_n
    )
    return y.view(x.shape), residual
