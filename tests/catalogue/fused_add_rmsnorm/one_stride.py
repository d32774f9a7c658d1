"""Mistake: one stride for every tensor: the residual and y are walked at x's row stride, past
their ends when x is strided."""

import torch
import triton
import triton.language as tl

EXPECT = "test_masked_last_block"
ALSO = "test_row_stride"
SAYS = "after the end of the residual"


@triton.jit
def _fused_add_rms_norm_fwd(
    X,
    R,
    Y,
    W,
    stride_x,
    N,
    eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(R + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    s = (x + r).to(R.dtype.element_ty)
    tl.store(R + row * stride_x + cols, s, mask=mask)
    s = s.to(tl.float32)
    mean_square = tl.sum(s * s, axis=0) / N
    rstd = tl.rsqrt(mean_square + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride_x + cols, (s * rstd * w).to(Y.dtype.element_ty), mask=mask)


def fused_add_rms_norm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> tuple[torch.Tensor, torch.Tensor]:
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    y = torch.empty((x2d.shape[0], n), dtype=x.dtype, device=x.device)
    block_n = triton.next_power_of_2(n)
    num_warps = min(max(block_n // 256, 1), 8)
    _fused_add_rms_norm_fwd[(x2d.shape[0],)](
        x2d, residual, y, weight, x2d.stride(0), n, eps, BLOCK_N=block_n, num_warps=num_warps
    )
    return y.view(x.shape), residual
