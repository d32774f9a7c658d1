"""Mistake: a persistent grid of 16 programs, each adding and normalizing three rows (pid,
pid + 16 and pid + 32), as if no batch had more than 48 rows: past those, the residual keeps
what it held and y is left unwritten. A loop over the rows pid, pid + P, pid + 2P, ... for as
long as they are below M takes them all.
"""

import torch
import triton
import triton.language as tl

EXPECT = "test_leading_dims"

PROGRAMS = 16  # programs of the persistent grid, each taking ROUNDS rows
ROUNDS = 3


@triton.jit
def _fused_add_rms_norm_fwd(
    X, R, Y, W, stride_x, M, N, eps,
    PROGRAMS: tl.constexpr, ROUNDS: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    cols = tl.arange(0, BLOCK_N)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    for i in tl.static_range(ROUNDS):
        row = (tl.program_id(0) + i * PROGRAMS).to(tl.int64)
        mask = (cols < N) & (row < M)
        x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        s = (x + r).to(R.dtype.element_ty)
        tl.store(R + row * N + cols, s, mask=mask)
        s = s.to(tl.float32)
        rstd = tl.rsqrt(tl.sum(s * s, axis=0) / N + eps)
        tl.store(Y + row * N + cols, (s * rstd * w).to(Y.dtype.element_ty), mask=mask)


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    m = x2d.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    _fused_add_rms_norm_fwd[(min(m, PROGRAMS),)](
        x2d, residual, y, weight, x2d.stride(0), m, n, eps,
        PROGRAMS=PROGRAMS, ROUNDS=ROUNDS, BLOCK_N=triton.next_power_of_2(n),
    )  # fmt: skip
    return y.view(x.shape), residual
