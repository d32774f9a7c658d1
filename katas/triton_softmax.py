"""Kata: online softmax in Triton, forward and backward, as an autograd.Function.

What it is
----------
"Write softmax in Triton, for rows of any width." Softmax turns a row of scores into
probabilities: attention's weights, a language model's distribution over 100 000+ tokens.
Triton's tutorial 02 (fused softmax) keeps each row in one block of registers: it reads x once
and writes y once, but only for rows that fit in a block. For wider rows, the online softmax
(Milakov & Gimelshein, 2018; the trick inside FlashAttention) walks the row block by block,
keeping a running max and a running sum that it rescales whenever the max grows: the row's
statistics in one pass, then a second pass writes y.

The maths
---------
For each row x of N elements (the last dimension):

    m = maxⱼ xⱼ,    s = Σⱼ exp(xⱼ − m),    yⱼ = exp(xⱼ − m) / s

Subtracting m changes nothing in exact arithmetic (it cancels), but keeps exp finite: exp(89)
is already inf in float32, and inf / inf is NaN.

Online, block by block (x_b: the block's elements), from m = −∞ and s = 0:

    m_new = max(m, max(x_b)),    s = s · exp(m − m_new) + Σ exp(x_b − m_new),    m = m_new

Backward, with dy = dL/dy and y, the output saved by forward:

    dx = y · (dy − Σⱼ dyⱼ · yⱼ)        the sum along the row

Shapes
------
    x, y, dy, dx : (*, N), viewed as M rows of N; x's last dim is contiguous

The contract (interview core)
-----------------------------
* ``SoftmaxFunction(torch.autograd.Function)``: ``forward(ctx, x)`` returns y, the softmax of x
  over its last dimension computed by your forward kernel, and saves y with
  ``ctx.save_for_backward``; ``backward(ctx, dy)`` returns dx, computed by your backward kernel
  from that y and dy (not from x).
* y goes into a tensor of its own: x is only loaded, never stored to.
* The forward kernel is online: one pass over the row keeps the running max and sum, a second
  writes y. Each element of x is read at most twice (the textbook max pass, sum pass and
  output pass read it three times).
* Rows of any width: the kernels walk a row in blocks of at most 65536 columns (a fixed BLOCK,
  or ``min(triton.next_power_of_2(N), BLOCK)``), as many steps as the row needs. One block sized
  to the whole row, as in tutorial 02, is not enough: a row of 70 000 would take 131072 lanes.
* In forward the spare lanes of a block (columns ≥ N) load as ``-inf``: they must never become
  the max, and exp(−∞) = 0 adds nothing to the sum. The max is subtracted before exp.
* Outside the kernels, torch only allocates (``torch.empty``) and makes views: no arithmetic
  on x, y or dy, and no copies either (``.contiguous()``, ``.float()``, ``.to()``).
* Every ``tl.load`` and ``tl.store`` stays inside its tensor: mask the spare lanes.
* No two programs update the same element with plain loads and stores: on a GPU one of the
  updates is lost. One program per row needs no care; a row split across programs keeps each
  block's max and sum in a slot of its own, combined by the next kernel.
* x and dy come as the caller made them: x's rows may lie further apart than N (a slice of a
  wider tensor), and autograd may hand backward a transposed dy, or an expanded one (y.sum()
  gives strides of 0). The kernels read them where they are, by their strides.
* Any number of rows and leading dims, float32, float16 and bfloat16: y and dx in x's dtype,
  within its tolerance (``tl.exp`` takes float32 only: cast each loaded block).
* ``softmax`` and the ``Softmax`` module below are written for you: they apply your Function,
  as ``torch.softmax(x, -1)`` and ``nn.Softmax(dim=-1)`` do.

Torch parity (stretch)
----------------------
* ``softmax(x)`` and ``Softmax()`` behave as ``torch.softmax(x, -1)`` and ``nn.Softmax(dim=-1)``:
  a 1-D x is one row, gradients flow through autograd, and the dy autograd hands backward is
  left as it was.

Pitfalls interviewers probe
---------------------------
* Why subtract the max? What does exp(100) give in float32, and exp(12) in float16?
* Spare lanes loaded as 0 instead of −∞: a 0 can become the row's max. When does that show?
* When the max grows from m to m_new, the sum so far must be rescaled by exp(m − m_new).
* Why does backward read y and not x? What does Σ dy · y do to dx when dy is the same along
  the row?
* Online (two reads of x) against tutorial 02's single block (one read): which is faster for
  rows of 1024? Of 100 000?

"From scratch" rules
--------------------
The kernels do the work. On every call the grader records the torch operations run outside
them, checks that kernels were launched, and (in the interpreter) checks the address of every
load and store against the tensors each launch was given, and which program touched which
element: two programs sharing an element without an atomic or a lock is a race. It also
counts, in the interpreter, how many times each element of x is read and how wide each load
is: compiled on a GPU (``--device cuda``) none of this can be watched, so grade on the CPU as
well.

Triton without a GPU
--------------------
Unless you grade with ``--device cuda`` on a GPU, the grader runs your kernels in Triton's
interpreter, one program after another, with numpy: it sets ``TRITON_INTERPRET=1`` itself.
Do not add ``from __future__ import annotations`` here: Triton 3.0 and 3.1's interpreter then no
longer sees ``tl.constexpr``. The interpreter computes bfloat16 × bfloat16 (and +, − and
``tl.sum``) on the raw bits: where your kernel does, its bfloat16 check is skipped with a note,
and those values are checked only with ``--device cuda``. Cast to float32 after ``tl.load``.

Grade yourself with::

    nox -s kata-triton-softmax
    nox -s kata-triton-softmax -- --device cuda     # on a machine with an NVIDIA GPU
"""

import torch
import triton
import triton.language as tl  # noqa: F401 (your kernels are written with it)
from torch import nn


@triton.jit
def _softmax_fwd(X, Y):  # TODO: the strides, the width N and the block size
    """Softmax of one row of X into Y: the online max and sum, then the output."""
    pass


@triton.jit
def _softmax_bwd(Y, DY, DX):  # TODO: the strides, the width N and the block size
    """dx = y · (dy − Σ dy · y) for one row."""
    pass


class SoftmaxFunction(torch.autograd.Function):
    """Softmax over the last dimension: Triton kernels forward and backward."""

    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def, override]
        """Allocate y, launch the forward kernel, save y for backward."""
        raise NotImplementedError("TODO: launch the forward kernel, save y")

    @staticmethod
    def backward(ctx, dy):  # type: ignore[no-untyped-def, override]
        """Return dx, computed by your backward kernel from the saved y and dy."""
        raise NotImplementedError("TODO: launch the backward kernel")


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax of x over its last dimension, through SoftmaxFunction."""
    return SoftmaxFunction.apply(x)


class Softmax(nn.Module):
    """nn.Softmax(dim=-1), computed by the Triton kernels above."""

    def __init__(self) -> None:
        super().__init__()
        self.dim = -1  # as nn.Softmax(dim=-1): the last dimension, the only one here

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax(x)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
