"""Correct, written differently: adds x and the residual in their own dtype (Triton rounds the
half-precision sum once, as the cast of a float32 sum does), and casts to float32 after.
The interpreter gets bfloat16 arithmetic wrong, so its bfloat16 checks are skipped, not failed."""

import torch
import triton
import triton.language as tl

EXPECT = "pass"


@triton.jit
def _kernel(X, R, Y, W, stride_x, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    h = tl.load(X + row * stride_x + cols, mask=mask, other=0.0) + tl.load(
        R + row * N + cols, mask=mask, other=0.0
    )
    tl.store(R + row * N + cols, h, mask=mask)
    h = h.to(tl.float32)
    rstd = tl.rsqrt(tl.sum(h * h, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0)
    tl.store(Y + row * N + cols, h * rstd * w, mask=mask)


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n)
    _kernel[(x2d.shape[0],)](x2d, residual, y, weight, x2d.stride(0), n, eps, BLOCK_N=block)
    return y, residual
