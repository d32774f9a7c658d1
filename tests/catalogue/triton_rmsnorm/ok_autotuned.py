"""Correct, autotuned as production kernels are: @triton.autotune picks num_warps among three
configs, keyed on N. On a GPU the autotuner times each config; Triton's interpreter has nothing
to time with, so the grader runs each config once (every access checked) and keeps the first.
"""

import torch
import triton
import triton.language as tl

EXPECT = "pass"


@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (1, 4, 8)], key=["N"])
@triton.jit
def _rms_norm_fwd(X, Y, W, stride_x, stride_y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride_y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n = x.shape[-1]
    if x.stride(-1) != 1:
        x = x.contiguous()
    x2d = x.reshape(-1, n)
    y = torch.empty((x2d.shape[0], n), dtype=x.dtype, device=x.device)
    block_n = triton.next_power_of_2(n)
    _rms_norm_fwd[(x2d.shape[0],)](
        x2d, y, weight, x2d.stride(0), y.stride(0), n, eps, BLOCK_N=block_n
    )
    return y.view(x.shape)
