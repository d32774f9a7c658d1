"""Mistake: scales the sum rounded to the residual's dtype, as stored, but takes the mean square
of the float32 sum: rstd is not that of the residual the next layer sees. Where the roundings
of a row lean one way, y is off by up to an ulp."""

import torch
import triton
import triton.language as tl

EXPECT = "test_residual_rounded_before_norm"


@triton.jit
def _fused_add_rms_norm_fwd(X, R, Y, W, stride_x, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    s = x + r
    h = s.to(R.dtype.element_ty)
    tl.store(R + row * N + cols, h, mask=mask)
    rstd = tl.rsqrt(tl.sum(s * s, axis=0) / N + eps)  # of s, the float32 sum: should be of h
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (h.to(tl.float32) * rstd * w).to(Y.dtype.element_ty), mask=mask)


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    y = torch.empty_like(residual)
    block_n = triton.next_power_of_2(n)
    _fused_add_rms_norm_fwd[(rows.shape[0],)](
        rows, residual, y, weight, rows.stride(0), n, eps, BLOCK_N=block_n
    )
    return y, residual
