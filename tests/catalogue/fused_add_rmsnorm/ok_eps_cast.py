"""Correct, written as Liger-Kernel writes its kernels: the scalar eps cast inside the kernel
(`eps.to(tl.float32)`, which needs eps to be a float32 value of the kernel, as a float argument
is when Triton compiles it), and LLaMA's rounding: the normalized row rounded to x's dtype
before the weight multiplies it. The interpreter gets bfloat16 arithmetic wrong, so its
bfloat16 checks are skipped, not failed."""

import torch
import triton
import triton.language as tl

EXPECT = "pass"


@triton.jit
def _fused_add_rms_norm_forward_kernel(
    Y_ptr, S_ptr, X_ptr, W_ptr, X_row_stride, n_cols, eps, BLOCK_SIZE: tl.constexpr
):
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    eps = eps.to(tl.float32)

    X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0)
    R_row = tl.load(S_ptr + row_idx * n_cols + col_offsets, mask=mask, other=0)
    S_row = X_row + R_row
    tl.store(S_ptr + row_idx * n_cols + col_offsets, S_row, mask=mask)
    S_row_dtype = S_row.dtype
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)

    S_row = S_row.to(tl.float32)
    mean_square = tl.sum(S_row * S_row, axis=0) / n_cols
    rstd = tl.rsqrt(mean_square + eps)
    S_row = (S_row * rstd).to(S_row_dtype)
    tl.store(Y_ptr + row_idx * n_cols + col_offsets, S_row * W_row, mask=mask)


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    shape = x.shape
    n_cols = shape[-1]
    x = x.view(-1, n_cols) if x.is_contiguous() else x.reshape(-1, n_cols)
    n_rows = x.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block_size = triton.next_power_of_2(n_cols)
    _fused_add_rms_norm_forward_kernel[(n_rows,)](
        y, residual, x, weight, x.stride(0), n_cols, eps, BLOCK_SIZE=block_size
    )
    return y.view(*shape), residual
