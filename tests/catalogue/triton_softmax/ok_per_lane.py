"""Correct, written differently (the author's attempt from the stub alone): each lane of the
block keeps its own running max and sum over the row's columns that fall in it, merged into the
row's once at the end (as FlashAttention's kernels keep statistics per query row); a lane whose
max is still -inf keeps a sum of 0 instead of exp(-inf - -inf) = NaN. Blocks of at most 1024,
backward accumulating Σ dy · y per lane too.
"""

import torch
import triton
import triton.language as tl
from torch import nn

EXPECT = "pass"


@triton.jit
def _softmax_fwd(X, Y, sx, sy, N, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    run_max = tl.full((BLOCK,), float("-inf"), tl.float32)
    run_sum = tl.zeros((BLOCK,), tl.float32)
    for c in range(0, N, BLOCK):
        idx = c + offs
        x = tl.load(X + r * sx + idx, mask=idx < N, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(run_max, x)
        empty = new_max == float("-inf")  # no value in this lane yet
        scale = tl.where(empty, 0.0, tl.exp(run_max - new_max))
        run_sum = run_sum * scale + tl.where(empty, 0.0, tl.exp(x - new_max))
        run_max = new_max
    m = tl.max(run_max, axis=0)
    s = tl.sum(run_sum * tl.exp(run_max - m), axis=0)
    for c in range(0, N, BLOCK):
        idx = c + offs
        x = tl.load(X + r * sx + idx, mask=idx < N, other=float("-inf")).to(tl.float32)
        tl.store(Y + r * sy + idx, (tl.exp(x - m) / s).to(Y.dtype.element_ty), mask=idx < N)


@triton.jit
def _softmax_bwd(Y, DY, DX, sy, sdy0, sdy1, sdx, N, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for c in range(0, N, BLOCK):
        idx = c + offs
        y = tl.load(Y + r * sy + idx, mask=idx < N, other=0.0).to(tl.float32)
        dy = tl.load(DY + r * sdy0 + idx * sdy1, mask=idx < N, other=0.0).to(tl.float32)
        acc += y * dy
    dot = tl.sum(acc, axis=0)
    for c in range(0, N, BLOCK):
        idx = c + offs
        y = tl.load(Y + r * sy + idx, mask=idx < N, other=0.0).to(tl.float32)
        dy = tl.load(DY + r * sdy0 + idx * sdy1, mask=idx < N, other=0.0).to(tl.float32)
        tl.store(DX + r * sdx + idx, (y * (dy - dot)).to(DX.dtype.element_ty), mask=idx < N)


class SoftmaxFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n)
        y = torch.empty((x2.shape[0], n), dtype=x.dtype, device=x.device)
        block = min(triton.next_power_of_2(n), 1024)
        _softmax_fwd[(x2.shape[0],)](x2, y, x2.stride(0), y.stride(0), n, BLOCK=block)
        ctx.save_for_backward(y)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        m, n = y.shape
        dy2 = dy.reshape(m, n)
        dx = torch.empty((m, n), dtype=dy.dtype, device=dy.device)
        block = min(triton.next_power_of_2(n), 1024)
        _softmax_bwd[(m,)](
            y, dy2, dx, y.stride(0), dy2.stride(0), dy2.stride(1), dx.stride(0), n, BLOCK=block
        )
        return dx.view(dy.shape)


def softmax(x):
    return SoftmaxFunction.apply(x)


class Softmax(nn.Module):
    def __init__(self):
        super().__init__()
        self.dim = -1

    def forward(self, x):
        return softmax(x)
