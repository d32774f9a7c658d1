"""Mistake: Triton's tutorial 02 (fused softmax): the whole row in one block sized to it, the
next power of two at or above N, forward and backward. Right for every row, and x read once,
but a row of 70001 takes blocks of 131072 lanes: more values than an SM has registers, which
spill to local memory on a GPU; past 2**20 lanes Triton refuses the block. Compiled, the width
of a block cannot be watched: only the interpreter sees it.
"""

import torch
import triton
import triton.language as tl

from solutions.triton_softmax import SoftmaxFunction as Reference

EXPECT = "test_wide_rows"
COMPILED = "pass"  # compiled on a GPU the blocks' width cannot be watched, and the values are right


@triton.jit
def _softmax_fwd(X, Y, stride_x, stride_y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
    numerator = tl.exp(x - tl.max(x, axis=0))
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_bwd(Y, DY, DX, stride_y, stride_dy, stride_dy_col, stride_dx, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    y = tl.load(Y + row * stride_y + cols, mask=mask, other=0.0).to(tl.float32)
    dy_at = DY + row * stride_dy + cols * stride_dy_col
    dy = tl.load(dy_at, mask=mask, other=0.0).to(tl.float32)
    dx = y * (dy - tl.sum(dy * y, axis=0))
    tl.store(DX + row * stride_dx + cols, dx.to(DX.dtype.element_ty), mask=mask)


class SoftmaxFunction(Reference):
    @staticmethod
    def forward(ctx, x):
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        y = torch.empty(x2d.shape, dtype=x.dtype, device=x.device)
        block = triton.next_power_of_2(n)
        _softmax_fwd[(x2d.shape[0],)](x2d, y, x2d.stride(0), y.stride(0), n, BLOCK=block)
        ctx.save_for_backward(y)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        m, n = y.shape
        dy2d = dy.reshape(m, n)
        dx = torch.empty((m, n), dtype=dy.dtype, device=dy.device)
        block = triton.next_power_of_2(n)
        _softmax_bwd[(m,)](y, dy2d, dx, y.stride(0), *dy2d.stride(), dx.stride(0), n, BLOCK=block)
        return dx.view(dy.shape)


def softmax(x):
    return SoftmaxFunction.apply(x)
