"""Kata: residual add and RMSNorm fused in one Triton kernel.

What it is
----------
"Every decoder layer does h = x + residual, then RMSNorm(h). Fuse them." In a pre-norm
transformer (LLaMA) each sublayer's output x is added to the residual stream, and the sum is
normalized for the next sublayer. Both steps are memory-bound: run as torch ops, the add reads
x and the residual and writes h, then the norm reads h back and writes y. One kernel reads x
and the residual once, writes the new residual and y once, and keeps h in registers between.
vLLM (``fused_add_rms_norm``), FlashInfer (``fused_add_rmsnorm``) and Liger-Kernel ship it;
this is LeetGPU's challenge 83.

The maths
---------
For each row (the last dimension, N elements), with w = weight:

    hⱼ   = round(xⱼ + rⱼ)              rounded to x's dtype: this is the new residual
    ms   = (1/N) · Σⱼ hⱼ²              of the rounded h, accumulated in float32
    rstd = 1 / √(ms + ε)
    yⱼ   = hⱼ · rstd · wⱼ               computed in float32, stored in x's dtype

Bytes moved for M rows in a dtype of s bytes: 2·M·N·s read (x, residual), 2·M·N·s written
(residual, y). The unfused pair moves at least 5·M·N·s.

Shapes
------
    x        : (*, N)   rows may be strided; the last dim is contiguous
    residual : x's shape and dtype, contiguous
    weight   : (N,)     in x's dtype, as a model's parameters are; used in float32

The contract (interview core)
-----------------------------
* ``fused_add_rms_norm(x, residual, weight, eps=1e-6)`` returns the pair ``(y, residual)``.
* The residual is updated IN PLACE, as vLLM and FlashInfer do: the caller's tensor ends up
  holding x + residual, in its own dtype (x's: float32, float16 or bfloat16, never a float32
  copy), and that very tensor is returned. x is NOT modified (vLLM's op also writes y over x;
  here y is a new tensor of x's shape and dtype).
* The sum is rounded to x's dtype BEFORE the norm: y is the norm of the residual as stored,
  as in vLLM, so that the next layer adds onto exactly what this one normalized.
* It launches your ``@triton.jit`` kernel, which does all the arithmetic, the add included.
  Outside the kernel torch only allocates y and makes views: no ``x + residual``, no copy of x
  or of the residual (``.contiguous()``, ``.to()``, ``.clone()``).
* Every ``tl.load`` and ``tl.store`` stays inside its tensor: spare lanes masked, the weight's
  load included (and the rows past the last one, where a program takes several rows).
* No two programs update the same element with a plain load, add and store: on a GPU one of
  the updates is lost. A row split across programs adds its partial sums of squares with
  ``tl.atomic_add`` (or under a lock); one program per row needs neither.
* Any width N up to 16384, powers of two or not, including rows wider than a block of 1024.
* Strided rows of x: x may be a slice such as ``buffer[:, :N]``. The residual and y are
  contiguous: their rows are N apart (y too, whatever x's strides).
* float32 accumulation: float16 inputs of magnitude 300 must not overflow.

Torch parity (stretch)
----------------------
* A single vector x of shape (N,) (one token) is one row.
* ``--perf`` on a GPU (``-- --device cuda --perf``) reports your bandwidth next to the unfused
  pair ``residual.add_(x)`` then ``F.rms_norm``. Never graded.

Pitfalls interviewers probe
---------------------------
* Which tensor is written in place, and in which dtype? What would a float32 residual stream
  cost, and buy?
* Is the norm taken of the float32 sum or of the sum as stored? Which one does the next layer
  see?
* What do the spare lanes of the block (N and beyond) load, for x and for the residual, and
  what do the stores do there?
* Where does row i start in x, in the residual, in y? Are the strides the same?
* How many warps for a row of 4096 or 8192? Triton's tutorial: ``min(max(BLOCK // 256, 1), 8)``.

"From scratch" rules
--------------------
The kernel does the work. On every call any check makes, the grader records the torch
operations that ``fused_add_rms_norm`` runs outside the kernel on x and on the residual, checks
that a Triton kernel was launched, and (in the interpreter) checks the address of every load
and store against the tensors the kernel was given, and which program touched which element:
two programs sharing an element without an atomic or a lock is a race. Compiled on a GPU
(``--device cuda``) a race cannot be watched, and shows only if the values come out wrong.

Triton without a GPU
--------------------
Unless you grade with ``--device cuda`` on a GPU, the grader runs your kernel in Triton's
interpreter (numpy, one program at a time); it sets ``TRITON_INTERPRET=1`` itself. Do not add
``from __future__ import annotations`` here: Triton 3.0 and 3.1's interpreter then no longer
sees ``tl.constexpr`` in the signature. The interpreter computes bfloat16 + bfloat16 (and × and
``tl.sum``) on the raw bits: where your kernel does, its bfloat16 check is skipped with a note
(``--device cuda`` grades it), never failed. Arithmetic in float32 is not affected.

Grade yourself with::

    nox -s kata-fused-add-rmsnorm
    nox -s kata-fused-add-rmsnorm -- --device cuda     # on a machine with an NVIDIA GPU
"""

import torch
import triton
import triton.language as tl  # noqa: F401 (your kernel is written with it)


@triton.jit
def _fused_add_rms_norm_fwd(X, R, Y, W):  # TODO: add the sizes, strides, eps and block size
    """Adds row i of X into row i of R (in place), then normalizes it into Y: one program a row."""
    pass


def fused_add_rms_norm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> tuple[torch.Tensor, torch.Tensor]:
    """residual += x, in place; then y = RMSNorm(residual) · weight, by one fused Triton kernel.

    Args:
        x: input of shape (*, N); rows may be strided, the last dimension has stride 1.
        residual: the residual stream, contiguous, of x's shape and dtype; updated in place.
        weight: the gain, of shape (N,).
        eps: added to the mean square before the square root. Default: 1e-6

    Returns:
        (y, residual): y a new tensor of x's shape and dtype; residual the caller's tensor,
        now holding x + residual rounded to its dtype.
    """
    raise NotImplementedError("TODO: allocate y, launch the kernel (one row each), return both")
