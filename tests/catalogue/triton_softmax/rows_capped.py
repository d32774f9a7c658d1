"""Mistake: a persistent grid of 64 programs, each computing two rows (pid and pid + 64), as if
no batch had more than 128 rows: every row from 128 on is left unwritten. A loop over the rows
pid, pid + P, pid + 2P, ... for as long as they are below M takes them all.
"""

import torch
import triton
import triton.language as tl

from solutions.triton_softmax import SoftmaxFunction as Reference
from solutions.triton_softmax import _block

EXPECT = "test_leading_dims"

PROGRAMS = 64  # a GPU's worth of programs, each taking ROUNDS rows
ROUNDS = 2


@triton.jit
def _softmax_fwd(
    X, Y, stride_x, stride_y, M, N,
    PROGRAMS: tl.constexpr, ROUNDS: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    cols = tl.arange(0, BLOCK)
    for i in tl.static_range(ROUNDS):
        row = (tl.program_id(0) + i * PROGRAMS).to(tl.int64)
        if row < M:
            m = -float("inf")
            s = 0.0
            for start in range(0, N, BLOCK):
                mask = start + cols < N
                x = tl.load(X + row * stride_x + start + cols, mask=mask, other=-float("inf"))
                x = x.to(tl.float32)
                m_new = tl.maximum(m, tl.max(x, axis=0))
                s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
                m = m_new
            for start in range(0, N, BLOCK):
                mask = start + cols < N
                x = tl.load(X + row * stride_x + start + cols, mask=mask, other=-float("inf"))
                y = tl.exp(x.to(tl.float32) - m) / s
                tl.store(Y + row * stride_y + start + cols, y.to(Y.dtype.element_ty), mask=mask)


class SoftmaxFunction(Reference):
    @staticmethod
    def forward(ctx, x):
        n = x.shape[-1]
        x2d = x.reshape(-1, n)
        m = x2d.shape[0]
        y = torch.empty(x2d.shape, dtype=x.dtype, device=x.device)
        _softmax_fwd[(min(m, PROGRAMS),)](
            x2d, y, x2d.stride(0), y.stride(0), m, n,
            PROGRAMS=PROGRAMS, ROUNDS=ROUNDS, BLOCK=_block(n),
        )  # fmt: skip
        ctx.save_for_backward(y)
        return y.view(x.shape)


def softmax(x):
    return SoftmaxFunction.apply(x)
