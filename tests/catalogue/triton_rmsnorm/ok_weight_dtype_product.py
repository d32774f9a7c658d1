"""Correct, written differently: rounds as Hugging Face's LlamaRMSNorm does, normalizing in
float32, then casting to the weight's dtype and multiplying by the weight in that dtype.

Triton's interpreter multiplies two bfloat16 values wrongly (every release up to 3.9 at least),
so on the CPU the bfloat16 check is skipped with a note, never failed; on a GPU it passes.
"""

import torch
import triton
import triton.language as tl

EXPECT = "pass"


@triton.jit
def _rms_norm_fwd(X, Y, W, stride_x, stride_y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0)
    y = (x * rstd).to(w.dtype) * w
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n = x.shape[-1]
    x2d = x.reshape(-1, n)
    y = torch.empty_like(x2d)
    block = triton.next_power_of_2(n)
    _rms_norm_fwd[(x2d.shape[0],)](
        x2d, y, weight, x2d.stride(0), y.stride(0), n, eps, BLOCK_N=block, num_warps=4
    )
    return y.view(x.shape)
