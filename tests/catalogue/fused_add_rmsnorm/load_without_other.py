"""Mistake: masks its loads but gives them no other=: the spare lanes past N are undefined
(Triton only promises that a masked lane does not touch memory), and the sum of squares adds
them in."""

import torch
import triton
import triton.language as tl

EXPECT = "test_masked_last_block"
ALSO = "test_non_power_of_two_width, test_wide_rows, test_row_stride, test_half_precision"
SAYS = "a masked load without other= left the lanes it masked undefined"


@triton.jit
def _fused_add_rms_norm_fwd(X, R, Y, W, stride_x, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask).to(tl.float32)  # no other=0.0
    r = tl.load(R + row * N + cols, mask=mask).to(tl.float32)
    h = (x + r).to(R.dtype.element_ty)
    tl.store(R + row * N + cols, h, mask=mask)
    h = h.to(tl.float32)
    rstd = tl.rsqrt(tl.sum(h * h, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    tl.store(Y + row * N + cols, (h * rstd * w).to(Y.dtype.element_ty), mask=mask)


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    y = torch.empty_like(residual)
    block_n = triton.next_power_of_2(n)
    _fused_add_rms_norm_fwd[(rows.shape[0],)](
        rows, residual, y, weight, rows.stride(0), n, eps, BLOCK_N=block_n
    )
    return y, residual
