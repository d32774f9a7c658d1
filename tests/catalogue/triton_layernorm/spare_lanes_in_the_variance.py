"""Mistake: forward walks the row in fixed blocks of 256 and subtracts the mean from every lane of
the block, spare lanes included (no tl.where): each lane past N adds mean² to the variance."""

import torch
import triton
import triton.language as tl
from torch import nn

EXPECT = "test_forward_formula"
ALSO = (
    "test_saves_mean_and_rstd, "
    "test_grad_x_through_the_variance, "
    "test_grad_x, "
    "test_grad_weight_and_bias, "
    "test_reduction_keeps_every_row, "
    "test_half_precision"
)

BLOCK = 256
PROGRAMS = 16


@triton.jit
def _layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride_x, stride_y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    X += row * stride_x
    Y += row * stride_y
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        s += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(s, axis=0) / N
    s2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        xc = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32) - mean
        s2 += xc * xc
    rstd = tl.rsqrt(tl.sum(s2, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < N
        x = tl.load(X + cols, mask=m, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=m, other=0.0).to(tl.float32)
        b = tl.load(B + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(Y + cols, ((x - mean) * rstd * w + b).to(Y.dtype.element_ty), mask=m)


@triton.jit
def _layer_norm_bwd_dx(
    X,
    DY,
    DX,
    W,
    Mean,
    Rstd,
    DW32,
    DB32,
    M,
    N,
    stride_x,
    stride_dy_r,
    stride_dy_c,
    stride_dx,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    for r in range(pid, M, tl.num_programs(0)):
        row = r.to(tl.int64)
        mean = tl.load(Mean + row)
        rstd = tl.load(Rstd + row)
        a1 = tl.zeros((BLOCK,), dtype=tl.float32)
        a2 = tl.zeros((BLOCK,), dtype=tl.float32)
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            m = cols < N
            x = tl.load(X + row * stride_x + cols, mask=m, other=0.0).to(tl.float32)
            dy = tl.load(DY + row * stride_dy_r + cols * stride_dy_c, mask=m, other=0.0).to(
                tl.float32
            )
            w = tl.load(W + cols, mask=m, other=0.0).to(tl.float32)
            xhat = tl.where(m, (x - mean) * rstd, 0.0)
            g = dy * w
            a1 += xhat * g
            a2 += g
        c1 = tl.sum(a1, axis=0) / N
        c2 = tl.sum(a2, axis=0) / N
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            m = cols < N
            x = tl.load(X + row * stride_x + cols, mask=m, other=0.0).to(tl.float32)
            dy = tl.load(DY + row * stride_dy_r + cols * stride_dy_c, mask=m, other=0.0).to(
                tl.float32
            )
            w = tl.load(W + cols, mask=m, other=0.0).to(tl.float32)
            xhat = tl.where(m, (x - mean) * rstd, 0.0)
            dx = (dy * w - c2 - xhat * c1) * rstd
            tl.store(DX + row * stride_dx + cols, dx.to(DX.dtype.element_ty), mask=m)
            tl.atomic_add(DW32 + cols, dy * xhat, mask=m)
            tl.atomic_add(DB32 + cols, dy, mask=m)


@triton.jit
def _cast(DW32, DB32, DW, DB, N, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = cols < N
    tl.store(DW + cols, tl.load(DW32 + cols, mask=m, other=0.0).to(DW.dtype.element_ty), mask=m)
    tl.store(DB + cols, tl.load(DB32 + cols, mask=m, other=0.0).to(DB.dtype.element_ty), mask=m)


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        m = x2d.shape[0]
        y = torch.empty((m, n), dtype=x.dtype, device=x.device)
        mean = torch.empty(m, dtype=torch.float32, device=x.device)
        rstd = torch.empty(m, dtype=torch.float32, device=x.device)
        _layer_norm_fwd[(m,)](
            x2d, y, weight, bias, mean, rstd, x2d.stride(0), y.stride(0), n, eps, BLOCK=BLOCK
        )
        ctx.save_for_backward(x2d, weight, mean, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x2d, weight, mean, rstd = ctx.saved_tensors
        m, n = x2d.shape
        dy2d = dy.reshape(m, n)
        dx = torch.empty((m, n), dtype=dy.dtype, device=dy.device)
        dw32 = torch.zeros(n, dtype=torch.float32, device=dy.device)
        db32 = torch.zeros(n, dtype=torch.float32, device=dy.device)
        _layer_norm_bwd_dx[(min(m, PROGRAMS),)](
            x2d,
            dy2d,
            dx,
            weight,
            mean,
            rstd,
            dw32,
            db32,
            m,
            n,
            x2d.stride(0),
            dy2d.stride(0),
            dy2d.stride(1),
            dx.stride(0),
            BLOCK=BLOCK,
        )
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        _cast[(triton.cdiv(n, BLOCK),)](dw32, db32, dw, db, n, BLOCK=BLOCK)
        return dx.view(dy.shape), dw, db, None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.normalized_shape = (normalized_shape,)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        return layer_norm(x, self.weight, self.bias, self.eps)
