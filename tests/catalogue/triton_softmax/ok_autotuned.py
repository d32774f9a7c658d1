"""Correct, autotuned as production kernels are: @triton.autotune picks the block and the warps
among four configs, keyed on N, forward and backward (the block a meta-parameter the grid never
names). On a GPU the autotuner times each config; Triton's interpreter has nothing to time with,
so the grader runs each config once (every access checked, none counted as the kernel's reads)
and keeps the first.
"""

import torch
import triton
import triton.language as tl
from torch import nn

EXPECT = "pass"

CONFIGS = [
    triton.Config({"BLOCK": block}, num_warps=warps)
    for block, warps in ((1024, 4), (2048, 8), (4096, 8), (8192, 16))
]


@triton.autotune(configs=CONFIGS, key=["N"])
@triton.jit
def _fwd(X, Y, stride_x, stride_y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    m = float("-inf")
    s = 0.0
    for start in range(0, N, BLOCK):
        cols = start + offsets
        x = tl.load(X + row * stride_x + cols, mask=cols < N, other=float("-inf"))
        x = x.to(tl.float32)
        new_m = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
        m = new_m
    for start in range(0, N, BLOCK):
        cols = start + offsets
        x = tl.load(X + row * stride_x + cols, mask=cols < N, other=float("-inf"))
        y = tl.exp(x.to(tl.float32) - m) / s
        tl.store(Y + row * stride_y + cols, y, mask=cols < N)


@triton.autotune(configs=CONFIGS, key=["N"])
@triton.jit
def _bwd(Y, DY, DX, stride_y, stride_dy, stride_dyc, stride_dx, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + offsets
        y = tl.load(Y + row * stride_y + cols, mask=cols < N, other=0.0).to(tl.float32)
        dy = tl.load(DY + row * stride_dy + cols * stride_dyc, mask=cols < N, other=0.0)
        acc += y * dy.to(tl.float32)
    dot = tl.sum(acc, axis=0)
    for start in range(0, N, BLOCK):
        cols = start + offsets
        y = tl.load(Y + row * stride_y + cols, mask=cols < N, other=0.0).to(tl.float32)
        dy = tl.load(DY + row * stride_dy + cols * stride_dyc, mask=cols < N, other=0.0)
        tl.store(DX + row * stride_dx + cols, y * (dy.to(tl.float32) - dot), mask=cols < N)


class SoftmaxFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        rows = x.reshape(-1, x.shape[-1])
        y = torch.empty(rows.shape, dtype=x.dtype, device=x.device)
        _fwd[(rows.shape[0],)](rows, y, rows.stride(0), y.stride(0), rows.shape[1])
        ctx.save_for_backward(y)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        dy_rows = dy.reshape(y.shape)
        dx = torch.empty(y.shape, dtype=dy.dtype, device=dy.device)
        _bwd[(y.shape[0],)](
            y, dy_rows, dx, y.stride(0), dy_rows.stride(0), dy_rows.stride(1), dx.stride(0),
            y.shape[1],
        )  # fmt: skip
        return dx.view(dy.shape)


def softmax(x):
    return SoftmaxFunction.apply(x)


class Softmax(nn.Module):
    def __init__(self):
        super().__init__()
        self.dim = -1

    def forward(self, x):
        return softmax(x)
