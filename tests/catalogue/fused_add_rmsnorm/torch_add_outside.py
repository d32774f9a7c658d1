"""Mistake: adds the residual in torch (residual.add_(x)) and fuses only the norm: one more
read of both and write of the residual, outside the kernel."""

import torch
import triton
import triton.language as tl

EXPECT = "test_kernel_does_the_work"
ALSO = (
    "test_outputs_like_input, "
    "test_masked_last_block, "
    "test_residual_is_the_sum, "
    "test_residual_in_place, "
    "test_formula, "
    "test_non_power_of_two_width, "
    "test_wide_rows, "
    "test_race_free, "
    "test_leading_dims, "
    "test_row_stride, "
    "test_fp32_accumulation, "
    "test_half_precision, "
    "test_residual_rounded_before_norm"
)
SAYS = "aten.add_"


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
    r = tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    s = r
    mean_square = tl.sum(s * s, axis=0) / N
    rstd = tl.rsqrt(mean_square + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (s * rstd * w).to(Y.dtype.element_ty), mask=mask)


def fused_add_rms_norm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> tuple[torch.Tensor, torch.Tensor]:
    n = x.shape[-1]
    residual.add_(x)
    x2d = x.reshape(-1, n)
    y = torch.empty((x2d.shape[0], n), dtype=x.dtype, device=x.device)
    block_n = triton.next_power_of_2(n)
    num_warps = min(max(block_n // 256, 1), 8)
    _fused_add_rms_norm_fwd[(x2d.shape[0],)](
        x2d, residual, y, weight, x2d.stride(0), n, eps, BLOCK_N=block_n, num_warps=num_warps
    )
    return y.view(x.shape), residual
