"""Mistake: several rows per program (a block of ROWS rows by BLOCK_N columns), with the columns
masked but not the rows: where the row count is not a multiple of ROWS, the last program reads
and writes rows past the last one."""

import torch
import triton
import triton.language as tl

EXPECT = "test_masked_last_block"
ALSO = (
    "test_outputs_like_input, "
    "test_residual_is_the_sum, "
    "test_non_power_of_two_width, "
    "test_race_free, "
    "test_leading_dims, "
    "test_row_stride"
)
SAYS = "rows < M as well where a program takes several rows"

ROWS = 4


@triton.jit
def _fused_add_rms_norm_fwd(
    X, R, Y, W, stride_x, N, eps, ROWS: tl.constexpr, BLOCK_N: tl.constexpr
):
    rows = (tl.program_id(0) * ROWS + tl.arange(0, ROWS)).to(tl.int64)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    mask = cols < N  # and rows < M is missing
    x = tl.load(X + rows * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(R + rows * N + cols, mask=mask, other=0.0).to(tl.float32)
    h = (x + r).to(R.dtype.element_ty)
    tl.store(R + rows * N + cols, h, mask=mask)
    h = h.to(tl.float32)
    rstd = tl.rsqrt(tl.sum(h * h, axis=1) / N + eps)[:, None]
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + rows * N + cols, (h * rstd * w).to(Y.dtype.element_ty), mask=mask)


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    y = torch.empty_like(residual)
    block_n = triton.next_power_of_2(n)
    _fused_add_rms_norm_fwd[(triton.cdiv(rows.shape[0], ROWS),)](
        rows, residual, y, weight, rows.stride(0), n, eps, ROWS=ROWS, BLOCK_N=block_n
    )
    return y, residual
