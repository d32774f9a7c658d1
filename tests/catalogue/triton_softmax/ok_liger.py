"""Correct, written differently: Liger-Kernel's softmax (linkedin/Liger-Kernel, BSD-2-Clause,
src/liger_kernel/ops/softmax.py), adapted. Rows of up to 65536 columns go through a single-block
kernel (the whole row in registers, x read once); wider rows through multi-block kernels that
loop over the row in blocks of 65536 with the online max and sum. Liger makes x and dy
contiguous first (its ensure_contiguous decorator, .contiguous().view(...)), a copy whenever
they are not: here the kernels take each tensor's strides instead, dy's column stride too.
Its calculate_settings is inlined; its cache modifiers are kept.
"""

import torch
import triton
import triton.language as tl
from torch import nn

EXPECT = "pass"

MAX_FUSED_SIZE = 65536


def calculate_settings(n):
    block_size = triton.next_power_of_2(n)
    if block_size > MAX_FUSED_SIZE:
        raise RuntimeError(f"n = {n} exceeds the recommended Triton blocksize = {MAX_FUSED_SIZE}.")
    num_warps = 4
    if block_size >= 32768:
        num_warps = 32
    elif block_size >= 8192:
        num_warps = 16
    elif block_size >= 2048:
        num_warps = 8
    return block_size, num_warps


@triton.jit
def _softmax_single_block_forward_kernel(
    Y_ptr, Y_row_stride, X_ptr, X_row_stride, n_cols, BLOCK_SIZE: tl.constexpr
):
    row_id = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    x = tl.load(
        X_ptr + row_id * X_row_stride + offs, mask=mask, other=-float("inf"), cache_modifier=".ca"
    )
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    d = tl.sum(e, axis=0)
    y = e / d
    tl.store(Y_ptr + row_id * Y_row_stride + offs, y, mask=mask, cache_modifier=".cs")


@triton.jit
def _softmax_multi_block_forward_kernel(
    Y_ptr, Y_row_stride, X_ptr, X_row_stride, n_cols, BLOCK_SIZE: tl.constexpr
):
    row_id = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_SIZE)
    m = -float("inf")
    d = 0.0
    for start in tl.range(0, n_cols, BLOCK_SIZE):
        idx = start + offs
        mask = idx < n_cols
        xblk = tl.load(
            X_ptr + row_id * X_row_stride + idx,
            mask=mask,
            other=-float("inf"),
            cache_modifier=".ca",
        )
        blk_max = tl.max(xblk, axis=0)
        new_m = tl.maximum(m, blk_max)
        d = d * tl.exp(m - new_m) + tl.sum(tl.exp(xblk - new_m), axis=0)
        m = new_m
    for start in tl.range(0, n_cols, BLOCK_SIZE):
        idx = start + offs
        mask = idx < n_cols
        xblk = tl.load(
            X_ptr + row_id * X_row_stride + idx,
            mask=mask,
            other=-float("inf"),
            cache_modifier=".ca",
        )
        yblk = tl.exp(xblk - m) / d
        tl.store(Y_ptr + row_id * Y_row_stride + idx, yblk, mask=mask, cache_modifier=".cs")


@triton.jit
def _softmax_single_block_backward_kernel(
    dy_ptr, dy_stride, dy_col_stride, y_ptr, y_stride, dx_ptr, dx_stride, n_cols,
    BLOCK_SIZE: tl.constexpr,
):  # fmt: skip
    row_id = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    dy = tl.load(dy_ptr + row_id * dy_stride + offs * dy_col_stride, mask=mask, other=0.0)
    y = tl.load(y_ptr + row_id * y_stride + offs, mask=mask, other=0.0, cache_modifier=".ca")
    dot = tl.sum(dy * y, axis=0)
    dx = y * (dy - dot)
    tl.store(dx_ptr + row_id * dx_stride + offs, dx, mask=mask, cache_modifier=".wb")


@triton.jit
def _softmax_multi_block_backward_kernel(
    dy_ptr, dy_stride, dy_col_stride, y_ptr, y_stride, dx_ptr, dx_stride, n_cols,
    BLOCK_SIZE: tl.constexpr,
):  # fmt: skip
    row_id = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_SIZE)
    acc = 0.0
    for start in tl.range(0, n_cols, BLOCK_SIZE):
        idx = start + offs
        mask = idx < n_cols
        dy_blk = tl.load(dy_ptr + row_id * dy_stride + idx * dy_col_stride, mask=mask, other=0.0)
        y_blk = tl.load(y_ptr + row_id * y_stride + idx, mask=mask, other=0.0, cache_modifier=".ca")
        acc += tl.sum(dy_blk * y_blk, axis=0)
    for start in tl.range(0, n_cols, BLOCK_SIZE):
        idx = start + offs
        mask = idx < n_cols
        dy_blk = tl.load(dy_ptr + row_id * dy_stride + idx * dy_col_stride, mask=mask, other=0.0)
        y_blk = tl.load(y_ptr + row_id * y_stride + idx, mask=mask, other=0.0, cache_modifier=".ca")
        dx_blk = y_blk * (dy_blk - acc)
        tl.store(dx_ptr + row_id * dx_stride + idx, dx_blk, mask=mask, cache_modifier=".wb")


def _softmax_forward(x):
    *batch, n_cols = x.shape
    x2d = x.reshape(-1, n_cols)
    n_rows = x2d.shape[0]
    y2d = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if n_cols <= MAX_FUSED_SIZE:
        BLOCK_SIZE, num_warps = calculate_settings(n_cols)
        _softmax_single_block_forward_kernel[(n_rows,)](
            y2d, y2d.stride(0), x2d, x2d.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE,
            num_warps=num_warps,
        )  # fmt: skip
        multi_block_launch = False
    else:
        BLOCK_SIZE, num_warps = calculate_settings(MAX_FUSED_SIZE)
        _softmax_multi_block_forward_kernel[(n_rows,)](
            y2d, y2d.stride(0), x2d, x2d.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE,
            num_warps=num_warps,
        )  # fmt: skip
        multi_block_launch = True
    return y2d.view(*batch, n_cols), BLOCK_SIZE, num_warps, multi_block_launch


def _softmax_backward(dy, y, BLOCK_SIZE, num_warps, multi_block_launch):
    *batch, n_cols = dy.shape
    dy2d = dy.reshape(-1, n_cols)
    y2d = y.reshape(-1, n_cols)
    n_rows = dy2d.shape[0]
    dx2d = torch.empty((n_rows, n_cols), dtype=dy.dtype, device=dy.device)
    if not multi_block_launch and n_cols <= BLOCK_SIZE:
        kernel = _softmax_single_block_backward_kernel
    else:
        kernel = _softmax_multi_block_backward_kernel
    kernel[(n_rows,)](
        dy2d, dy2d.stride(0), dy2d.stride(1), y2d, y2d.stride(0), dx2d, dx2d.stride(0), n_cols,
        BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
    )  # fmt: skip
    return dx2d.view(*batch, n_cols)


class SoftmaxFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_):
        y, BLOCK_SIZE, num_warps, multi_block_launch = _softmax_forward(input_)
        ctx.save_for_backward(y)
        ctx.BLOCK_SIZE = BLOCK_SIZE
        ctx.num_warps = num_warps
        ctx.multi_block_launch = multi_block_launch
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return _softmax_backward(
            grad_output, y, ctx.BLOCK_SIZE, ctx.num_warps, ctx.multi_block_launch
        )


def softmax(x):
    return SoftmaxFunction.apply(x)


class Softmax(nn.Module):
    def __init__(self):
        super().__init__()
        self.dim = -1

    def forward(self, x):
        return softmax(x)
