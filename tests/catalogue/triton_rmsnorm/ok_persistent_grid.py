"""Correct, written differently: a persistent grid, as kernels sized to a GPU launch it: at most
PROGRAMS programs, each taking rows pid, pid + P, pid + 2P, ... (P the grid's size) for as
long as they are below M, its loop variable widened to int64 for the row offsets; the weight
is loaded once per program.
"""

import torch
import triton
import triton.language as tl

EXPECT = "pass"

PROGRAMS = 96  # fewer than the rows of a large batch: each program takes several


@triton.jit
def _rms_norm_persistent(X, Y, W, stride_x, stride_y, M, N, eps, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    for row in range(tl.program_id(0), M, tl.num_programs(0)):
        r = row.to(tl.int64)  # r * stride passes 2**31 on large activations
        x = tl.load(X + r * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
        tl.store(Y + r * stride_y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    m = x2d.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    block_n = triton.next_power_of_2(n)
    _rms_norm_persistent[(min(m, PROGRAMS),)](
        x2d, y, weight, x2d.stride(0), y.stride(0), m, n, eps, BLOCK_N=block_n,
        num_warps=min(max(block_n // 256, 1), 8),
    )  # fmt: skip
    return y.view(x.shape)
