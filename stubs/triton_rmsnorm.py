"""Kata: a fused RMSNorm kernel in Triton.

What it is
----------
"RMSNorm is memory-bound. Write the fused kernel." RMSNorm (as in LLaMA) divides each row of
activations by its root mean square and scales it by a learned gain; an LLM runs it twice per
layer on every token. It does a handful of flops per element, so its time is set by the bytes
it moves, not by arithmetic. Written with tensor operations it runs as a chain of kernels
(square, mean, add, rsqrt, multiply, multiply, cast), each of which reads its input from GPU
memory and writes its output back. A fused kernel reads x once and writes y once. Triton
writes such a kernel in Python: each program instance normalizes one row, held in registers as
one block.

The maths
---------
For each row x of N elements (the last dimension), with w = weight:

    ms   = (1/N) · Σⱼ xⱼ²              accumulated in float32, whatever x's dtype
    rstd = 1 / √(ms + ε)
    yⱼ   = xⱼ · rstd · wⱼ               computed in float32, stored in x's dtype

Bytes moved for M rows in a dtype of s bytes: M·N·s read, M·N·s written (and N·s for the
weight). That is what a plain copy of x moves, which makes a copy the speed to aim for.

Shapes
------
    x      : (*, N)   any number of leading dims; rows may be strided, the last dim is contiguous
    weight : (N,)
    output : x's shape, in x's dtype

The contract (interview core)
-----------------------------
* ``rms_norm(x, weight, eps=1e-6)`` normalizes the last dimension of x and returns the result
  in x's shape and dtype (float32, float16 or bfloat16).
* y goes into a tensor of its own: x is only loaded, never stored to (it is the residual
  stream the caller adds back).
* It launches your ``@triton.jit`` kernel, which does all the arithmetic. Outside the kernel,
  torch only allocates the output and makes views (reshape, view): no copy of x either
  (``x.contiguous()``, ``.to()``, ``.clone()``), for any input.
* Every ``tl.load`` and ``tl.store`` stays inside its tensor: the block's spare lanes are
  masked, on the weight's load too, even where the values read there would never be stored.
* No two programs update the same element with a plain load, add and store: on a GPU one of
  the updates is lost. A row split across programs adds its partial sums of squares with
  ``tl.atomic_add`` (or under a lock); one program per row needs neither.
* Any width N up to 16384, powers of two or not, including rows wider than a block of 1024 or
  4096 elements.
* Strided rows: x may be a slice such as ``buffer[:, :N]``, whose rows are more than N elements
  apart. Pass the stride to the kernel instead of copying x.
* float32 accumulation: a float16 input of magnitude 300 must not overflow.

Torch parity (stretch)
----------------------
* A single vector x of shape (N,) is one row, as F.rms_norm takes it. F.rms_norm's other
  extras (several normalized dims, eps=None) are out of scope.
* On a GPU (``--device cuda``) the grader also reports the bandwidth your kernel reaches, as a
  fraction of a copy of the same bytes and next to F.rms_norm's. That report is never graded.

Pitfalls interviewers probe
---------------------------
* ``tl.arange`` needs a power-of-two length, so the block is ``triton.next_power_of_2(N)``. What
  happens to the lanes at N and beyond, on the load and on the store? What does the last row's
  block touch?
* Is the mean taken over N or over the block?
* Where does row i start, in the input and in the output? Are both strides the same?
* With leading dims (batch, sequence), how many programs do you launch?
* Why accumulate in float32 (300² = 90000 > 65504, float16's largest value), and where is the
  result cast back?
* How many warps does a 4096-wide row need to keep the memory system busy? Triton's LayerNorm
  tutorial uses ``min(max(BLOCK // 256, 1), 8)``.
* ``row * stride`` in int32 overflows past 2³¹ elements (16 × 32768 × 4096 activations).

"From scratch" rules
--------------------
The kernel does the work. Outside it, torch may allocate the output and make views, nothing
more on the activations: no ``x.float()``, ``x.pow(2).mean(-1)``, ``torch.rsqrt``,
``F.rms_norm``, ``x.contiguous()``, ``.to(x.dtype)`` after the kernel, ... On every call any
check makes, the grader records the torch operations that ``rms_norm`` runs outside the
kernel, checks that a Triton kernel was launched, and (in the interpreter) checks the address
of every load and store against the tensors the kernel was given, and which program touched
which element: two programs sharing an element without an atomic or a lock is a race. Compiled
on a GPU (``--device cuda``) a race cannot be watched, and shows only if the values come out
wrong.

Triton without a GPU
--------------------
Unless you grade with ``--device cuda`` on a GPU, the grader runs your kernel in Triton's
interpreter: the same language, executed with numpy. It sets ``TRITON_INTERPRET=1`` itself,
before Triton and this file are imported. Do not add ``from __future__ import annotations``
here: Triton 3.0 and 3.1's interpreter then no longer sees ``tl.constexpr`` in the signature.
The interpreter computes bfloat16 × bfloat16 (and + and ``tl.sum``) on the raw bits: where your
kernel does, its bfloat16 check is skipped with a note (``--device cuda`` grades it), never
failed. Arithmetic in float32, as above, is not affected.

Grade yourself with::

    nox -s kata-triton-rmsnorm
    nox -s kata-triton-rmsnorm -- --device cuda     # on a machine with an NVIDIA GPU
"""

import torch
import triton
import triton.language as tl  # noqa: F401 (your kernel is written with it)


@triton.jit
def _rms_norm_fwd(X, Y, W):  # TODO: add the sizes, strides, eps and block size it needs
    """Normalizes one row of X into Y: one program per row (``tl.program_id(0)``)."""
    pass


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension of x, computed by one fused Triton kernel.

    Args:
        x: input of shape (*, N); rows may be strided, the last dimension has stride 1.
        weight: the gain, of shape (N,).
        eps: added to the mean square before the square root. Default: 1e-6

    Shape:
        - Output: x's shape, in x's dtype.
    """
    raise NotImplementedError("TODO: allocate the output and launch the kernel, one row each")
