"""Correct, written differently: each program normalizes a tile of several rows at once, with
a 2-D mask and a reduction along axis 1."""

import torch
import triton
import triton.language as tl

EXPECT = "pass"


@triton.jit
def _rms_norm_tile(X, Y, W, M, N, stride_x, stride_y, eps, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    rows64 = rows.to(tl.int64)[:, None]
    x = tl.load(X + rows64 * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=1) / N + eps)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = x * rstd[:, None] * w[None, :]
    tl.store(Y + rows64 * stride_y + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n = x.shape[-1]
    x2d = x.unsqueeze(0) if x.dim() == 1 else x.flatten(0, -2)
    m = x2d.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    cols = triton.next_power_of_2(n)
    rows = max(1, min(16, 4096 // cols))  # a tile of about 4096 elements
    grid = (triton.cdiv(m, rows),)
    _rms_norm_tile[grid](
        x2d, y, weight, m, n, x2d.stride(0), y.stride(0), eps, ROWS=rows, COLS=cols, num_warps=4
    )
    return y.view_as(x)
