"""Mistake: stores y over x whenever x is contiguous, to save an allocation: y is right, but
the caller's x, the residual stream that is added back after the norm, now holds y."""

import torch
import triton
import triton.language as tl

EXPECT = "test_input_unmodified"


@triton.jit
def _rms_norm_fwd(
    X,  # input, rows of N elements, stride_x apart
    Y,  # output, rows stride_y apart
    W,  # weight, N contiguous elements
    stride_x,
    stride_y,
    N,
    eps,
    BLOCK_N: tl.constexpr,
):
    # int64 row offsets: row * stride passes 2**31 on large activations (16 x 32768 x 4096).
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N  # BLOCK_N is a power of two >= N: the lanes past N must not touch memory
    # Accumulate in float32 whatever the input dtype: 300² overflows float16.
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean_square = tl.sum(x * x, axis=0) / N  # N, not BLOCK_N: masked lanes are zeros, not data
    rstd = tl.rsqrt(mean_square + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * rstd * w
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension of x, computed by one fused Triton kernel.

    Args:
        x: input of shape (*, N); rows may be strided, the last dimension must have stride 1.
        weight: the gain, of shape (N,).
        eps: added to the mean square before the square root.

    Shape:
        - Output: x's shape, in x's dtype (float32, float16 or bfloat16).
    """
    n = x.shape[-1]
    if weight.shape != (n,):
        raise ValueError(f"weight has shape {tuple(weight.shape)}, expected ({n},)")
    if x.stride(-1) != 1:
        x = x.contiguous()  # the kernel walks a row with unit steps
    x2d = x.reshape(-1, n)  # a view whenever one stride reaches every row: no copy
    y = (
        x2d
        if x2d.is_contiguous()
        else torch.empty((x2d.shape[0], n), dtype=x.dtype, device=x.device)
    )
    # The whole row in one block: the next power of two >= N (tl.arange needs one), and more
    # warps for wider rows so that each thread keeps a few 16-byte vectors, as the tutorial does.
    block_n = triton.next_power_of_2(n)
    num_warps = min(max(block_n // 256, 1), 8)
    _rms_norm_fwd[(x2d.shape[0],)](
        x2d, y, weight, x2d.stride(0), y.stride(0), n, eps, BLOCK_N=block_n, num_warps=num_warps
    )
    return y.view(x.shape)
