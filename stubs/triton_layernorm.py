"""Kata: LayerNorm forward and backward in Triton, as an autograd.Function.

What it is
----------
"Write LayerNorm's forward and backward as Triton kernels." Triton's own tutorial
(05-layer-norm) does it: forward normalizes one row per program and saves each row's mean and
1/σ; backward computes dx one row per program, and reduces dweight and dbias across rows. That
reduction is the interesting part: many programs contribute to the same N sums, and on a GPU
they run at the same time.

The maths
---------
For each row x of N elements, with w = weight, b = bias:

    μ = (1/N) Σⱼ xⱼ,   σ² = (1/N) Σⱼ (xⱼ − μ)²  (biased),   rstd = 1/√(σ² + ε)
    x̂ = (x − μ) · rstd,   y = x̂ · w + b

Backward, with dy = dL/dy and g = dy · w:

    dx       = rstd · (g − mean(g) − x̂ · mean(g · x̂))       means along the row
    dweight  = Σ_rows dy · x̂,   dbias = Σ_rows dy            sums down the rows

Shapes
------
    x, dy, y, dx : (*, N), viewed as M rows of N     weight, bias, dweight, dbias : (N,)
    mean, rstd   : (M,) float32, saved by forward

The contract (interview core)
-----------------------------
* ``LayerNormFunction(torch.autograd.Function)``: ``forward(ctx, x, weight, bias, eps)``
  normalizes the last dimension in your forward kernel, which also writes each row's mean and
  rstd into two float32 tensors of M elements, saved with ``ctx.save_for_backward``;
  ``backward(ctx, dy)`` returns ``(dx, dweight, dbias, None)``.
* y goes into a tensor of its own: x is only loaded, never stored to (backward needs it, and
  the caller still owns it).
* Backward: a kernel computes dx and partial sums of dweight and dbias; the sum across rows
  ends in a kernel too. Either each program writes its own partial row of a (P, N) float32
  buffer and a second kernel sums the P rows (as Triton's tutorial does, after a lock), or the
  programs add with ``tl.atomic_add``. Whatever the row count: M = 1 or 33 rows are summed in
  full, not rounded down to a whole number of blocks.
* No two programs update the same element with a plain load, add and store: on a GPU one of
  the updates is lost. Take a lock, use an atomic, or give each program its own partial row.
* Outside the kernels, torch only allocates (outputs, mean and rstd, partial buffers, with
  torch.empty or torch.zeros) and makes views. No arithmetic on x, dy or what the kernels
  write: no ``x.float()``, no mean or rstd recomputed in backward, and no ``partials.sum(0)``
  either (a second kernel sums the partial rows).
* Every ``tl.load`` and ``tl.store`` stays inside its tensor: mask the spare lanes of a block
  (cols < N), and the rows past the end in a block of rows.
* x and dy come as the caller made them: x's rows may lie further apart than N (a slice of a
  wider tensor), and autograd may hand backward a transposed dy, or an expanded one (y.sum()
  gives strides of 0). The kernels read them where they are, by their strides.
* Any width N up to 8192 (the row in one block), float32, float16 and bfloat16 (y and dx in x's
  dtype, dweight and dbias in the weight's, the arithmetic in float32).
* ``layer_norm`` and the ``LayerNorm`` module below are written for you: they apply your
  Function, as nn.LayerNorm does over the last dimension.

Torch parity (stretch)
----------------------
* ``LayerNorm(N)`` behaves as ``nn.LayerNorm(N)``: weight ones, bias zeros, both parameters in
  the state_dict, gradients through autograd.

Pitfalls interviewers probe
---------------------------
* Forgetting a mean term in dx: the gradient through μ, or through σ².
* dweight sums down the rows (every leading dim), feature by feature, not along a row.
* A second pass over P partial rows in steps of BLOCK_P: what happens to the last P mod BLOCK_P?
* Why save rstd and not the variance? Why in float32?
* Partial sums and a second pass, or atomics: which is deterministic? Which is faster?

"From scratch" rules
--------------------
The kernels do the work. On every call the grader records the torch operations run outside
them, checks that kernels were launched, and (in the interpreter) checks the address of every
load and store against the tensors each launch was given, and which program touched which
element: two programs sharing an element without an atomic or a lock is a race. Compiled on a
GPU (``--device cuda``) neither can be watched: a read out of bounds or a race shows there only
if the values come out wrong, and a store past the end only of a tensor forward or backward
allocated. Grade on the CPU as well.

Triton without a GPU
--------------------
Unless you grade with ``--device cuda`` on a GPU, the grader runs your kernels in Triton's
interpreter, one program after another, with numpy: it sets ``TRITON_INTERPRET=1`` itself.
That is why races cannot show in the values there, and why the grader watches accesses instead.
Do not add ``from __future__ import annotations`` here: Triton 3.0 and 3.1's interpreter then no
longer sees ``tl.constexpr``. The interpreter computes bfloat16 × bfloat16 (and + and
``tl.sum``) on the raw bits: where your kernel does, its bfloat16 check is skipped with a note,
and those values are checked only with ``--device cuda``.

Grade yourself with::

    nox -s kata-triton-layernorm
    nox -s kata-triton-layernorm -- --device cuda     # on a machine with an NVIDIA GPU
"""

import torch
import triton
import triton.language as tl  # noqa: F401 (your kernels are written with it)
from torch import nn


@triton.jit
def _layer_norm_fwd(X, Y, W, B, Mean, Rstd):  # TODO: the sizes, strides, eps and block size
    """Normalizes one row of X into Y and writes its mean and rstd: one program per row."""
    pass


@triton.jit
def _layer_norm_bwd_dx(X, DY, DX, W, Mean, Rstd, DW_partial, DB_partial):  # TODO: the rest
    """dx for its rows, and their partial sums of dweight and dbias."""
    pass


@triton.jit
def _layer_norm_bwd_dwdb(DW_partial, DB_partial, DW, DB):  # TODO: the sizes and block sizes
    """Sums the partial rows into dweight and dbias."""
    pass


class LayerNormFunction(torch.autograd.Function):
    """LayerNorm over the last dimension: Triton kernels forward and backward."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):  # type: ignore[no-untyped-def, override]
        """Allocate y, mean and rstd, launch the forward kernel, save what backward needs."""
        raise NotImplementedError("TODO: launch the forward kernel, save x, weight, mean, rstd")

    @staticmethod
    def backward(ctx, dy):  # type: ignore[no-untyped-def, override]
        """Return (dx, dweight, dbias, None), computed by your backward kernels."""
        raise NotImplementedError("TODO: launch the dx kernel, then the dweight/dbias kernel")


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """LayerNorm of x over its last dimension, through LayerNormFunction."""
    return LayerNormFunction.apply(x, weight, bias, eps)


class LayerNorm(nn.Module):
    """nn.LayerNorm over the last dimension, computed by the Triton kernels above."""

    def __init__(self, normalized_shape: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.normalized_shape = (normalized_shape,)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm(x, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"
