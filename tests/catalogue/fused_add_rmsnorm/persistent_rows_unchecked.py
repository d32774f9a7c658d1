"""Mistake: a persistent grid of P = min(M, 6) programs, each running ceil(M / P) rounds of row =
pid + i * P without checking row < M: where P does not divide the number of rows, the last round
of some programs adds into and normalizes rows past the last one (reading and writing outside x,
the residual and y)."""

import torch
import triton
import triton.language as tl

EXPECT = "test_masked_last_block"
ALSO = (
    "test_kernel_does_the_work, "
    "test_outputs_like_input, "
    "test_residual_is_the_sum, "
    "test_formula, "
    "test_non_power_of_two_width, "
    "test_leading_dims, "
    "test_row_stride, "
    "test_fp32_accumulation, "
    "test_half_precision, "
    "test_residual_rounded_before_norm"
)


@triton.jit
def _fused_add_rms_norm_fwd(X, R, Y, W, M, N, stride_x, eps, P, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    for i in range(0, tl.cdiv(M, P)):
        row = pid + i * P
        r64 = row.to(tl.int64)
        x = tl.load(X + r64 * stride_x + cols, mask=cmask, other=0.0)
        r = tl.load(R + r64 * N + cols, mask=cmask, other=0.0)
        h = (x.to(tl.float32) + r.to(tl.float32)).to(R.dtype.element_ty)
        tl.store(R + r64 * N + cols, h, mask=cmask)
        hf = h.to(tl.float32)
        var = tl.sum(hf * hf, axis=0) / N
        inv = 1.0 / tl.sqrt(var + eps)
        tl.store(Y + r64 * N + cols, (hf * inv * w).to(Y.dtype.element_ty), mask=cmask)


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    n = x.shape[-1]
    x2 = x.reshape(-1, n)
    m = x2.shape[0]
    y = torch.empty_like(residual)
    p = max(1, min(m, 6))
    _fused_add_rms_norm_fwd[(p,)](
        x2, residual, y, weight, m, n, x2.stride(0), eps, p, BLOCK_N=triton.next_power_of_2(n)
    )
    return y, residual
