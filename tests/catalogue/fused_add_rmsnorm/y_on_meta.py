"""Mistake: y comes back on the meta device, a stand-in of the right shape and dtype left from
working out shapes, which holds no values; the kernel's output is dropped. The report says so
in the check named for the output's shape, dtype and device, rather than with torch's error
from the values compared.
"""

import torch
import triton
import triton.language as tl

EXPECT = "test_outputs_like_input"
ALSO = (
    "test_masked_last_block, "
    "test_residual_is_the_sum, "
    "test_residual_in_place, "
    "test_formula, "
    "test_non_power_of_two_width, "
    "test_wide_rows, "
    "test_leading_dims, "
    "test_row_stride, "
    "test_fp32_accumulation, "
    "test_half_precision, "
    "test_residual_rounded_before_norm"
)
SAYS = "y is on meta, expected"


@triton.jit
def _fused_add_rms_norm_fwd(
    X,  # input, rows of N elements, stride_x apart; only read
    R,  # residual, contiguous rows of N elements: read, then overwritten with X + R
    Y,  # output, contiguous rows
    W,  # weight, N contiguous elements
    stride_x,
    N,
    eps,
    BLOCK_N: tl.constexpr,
):
    # int64 row offsets: row * stride passes 2**31 on large activations (16 x 32768 x 4096).
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N  # BLOCK_N is a power of two >= N: the lanes past N must not touch memory
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    # Round the sum to the residual's dtype first: the stream keeps these values, and the norm
    # below is taken of exactly them.
    s = (x + r).to(R.dtype.element_ty)
    tl.store(R + row * N + cols, s, mask=mask)
    s = s.to(tl.float32)  # and accumulate in float32 whatever the dtype: 300² overflows float16
    mean_square = tl.sum(s * s, axis=0) / N  # N, not BLOCK_N: masked lanes are zeros, not data
    rstd = tl.rsqrt(mean_square + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (s * rstd * w).to(Y.dtype.element_ty), mask=mask)


def fused_add_rms_norm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> tuple[torch.Tensor, torch.Tensor]:
    """residual += x, in place; then y = RMSNorm(residual) · weight, by one fused Triton kernel.

    Args:
        x: input of shape (*, N); rows may be strided, the last dimension has stride 1.
        residual: the residual stream, contiguous, of x's shape and dtype; updated in place.
        weight: the gain, of shape (N,).
        eps: added to the mean square before the square root.

    Returns:
        (y, residual): y a new tensor of x's shape and dtype; residual the caller's tensor,
        now holding x + residual rounded to its dtype.
    """
    n = x.shape[-1]
    x2d = x.reshape(-1, n)  # a view whenever one stride reaches every row: no copy
    y = torch.empty((x2d.shape[0], n), dtype=x.dtype, device=x.device)
    # The whole row in one block, and more warps for wider rows, as Triton's tutorial does.
    block_n = triton.next_power_of_2(n)
    num_warps = min(max(block_n // 256, 1), 8)
    _fused_add_rms_norm_fwd[(x2d.shape[0],)](
        x2d, residual, y, weight, x2d.stride(0), n, eps, BLOCK_N=block_n, num_warps=num_warps
    )
    return torch.empty_like(y, device="meta").view(x.shape), residual
