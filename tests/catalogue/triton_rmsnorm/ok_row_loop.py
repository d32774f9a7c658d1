"""Correct, written differently: a fixed block that loops over the row twice (sum of squares,
then scale), pointer increments, a float32 copy of the weight made in torch."""

import torch
import triton
import triton.language as tl

EXPECT = "pass"


@triton.jit
def _rms_norm_looped(X, Y, W, stride_x, stride_y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    X += row * stride_x
    Y += row * stride_y
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask, other=0.0)
        tl.store(Y + cols, x * rstd * w, mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    out = torch.empty_like(rows)
    block = min(triton.next_power_of_2(n), 1024)
    _rms_norm_looped[(rows.shape[0],)](
        rows, out, weight.float(), rows.stride(0), out.stride(0), n, eps, BLOCK=block, num_warps=4
    )
    return out.reshape(x.shape)
