"""Mistake: one row stride for input and output, as in Triton's LayerNorm tutorial: wrong when
x's rows are strided and the new output is contiguous."""

import torch
import triton
import triton.language as tl

EXPECT = "test_masked_last_block"
ALSO = "test_row_stride"


@triton.jit
def _rms_norm_fwd(X, Y, W, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    tl.store(Y + cols, x * rstd * w, mask=mask)


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    y = torch.empty_like(x2d)
    block = triton.next_power_of_2(n)
    num_warps = min(max(block // 256, 1), 8)
    _rms_norm_fwd[(x2d.shape[0],)](
        x2d, y, weight, x2d.stride(0), n, eps, BLOCK_N=block, num_warps=num_warps
    )
    return y.view(x.shape)
