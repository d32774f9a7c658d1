"""Mistake: assumes contiguous rows: row i starts i * N elements in, whatever x's stride."""

import torch
import triton
import triton.language as tl

EXPECT = "test_row_stride"


@triton.jit
def _rms_norm_fwd(X, Y, W, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    y = torch.empty_like(x2d)
    block = triton.next_power_of_2(n)
    _rms_norm_fwd[(x2d.shape[0],)](x2d, y, weight, n, eps, BLOCK_N=block)
    return y.view(x.shape)
