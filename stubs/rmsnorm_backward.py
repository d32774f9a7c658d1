"""Kata: RMSNorm's backward pass, derived and written by hand.

What it is
----------
RMSNorm (LLaMA, Mistral, Gemma, ...) divides each row by its root mean square and scales it:
no mean subtracted, no bias. Autograd differentiates it for you; the interview asks you to do
it yourself, as llm.c and fused Triton/CUDA kernels do: write a ``torch.autograd.Function``
whose ``backward`` computes the gradients of the input and the weight from the incoming
gradient, with no autograd inside. A fused kernel keeps only x̂ (or x) and 1/rms per row from
the forward pass, and computes the gradient in one pass over the row.

The maths
---------
Over the last dimension of size D, for each row:

    r = 1/√(mean(x²) + ε),  x̂ = x · r,  y = x̂ · w

With g = dL/dy · w (the gradient reaching x̂):

    dL/dw = Σ_rows dL/dy · x̂
    dL/dx = r · (g − x̂ · mean(g · x̂))        mean over the last dimension

The second term is the gradient flowing back through the rms: every element of the row moves
it. It removes from g its component along x̂ (a projection), since scaling a row leaves x̂
unchanged.

Shapes
------
    x: (*, D)    weight: (D,) or None    output and grad_x: like x    grad_weight: (D,)

The contract (interview core)
-----------------------------
* ``class RMSNormFunction(torch.autograd.Function)`` with static methods
  ``forward(ctx, x, weight, eps)``, normalizing over the last dimension, and
  ``backward(ctx, grad_out)``, returning ``(grad_x, grad_weight, None)`` (None for eps, which
  takes no gradient).
* ``weight`` may be None (torch's ``elementwise_affine=False``): then y = x̂, and backward
  returns None for the weight.
* ``rms_norm(x, weight=None, eps=None)`` returns ``RMSNormFunction.apply(x, weight, eps)``.
* ``x`` is ``(*, D)`` with at least one leading dim: rows of a batch, ``(N, D)``,
  ``(B, T, D)`` or more. An unbatched ``x`` of shape (D,) is torch parity, below.
* ``class RMSNorm(nn.Module)``: torch.nn.RMSNorm's drop-in over the last dimension,
  ``RMSNorm(normalized_shape, eps=None, elementwise_affine=True)`` with normalized_shape an int
  D (kept as the tuple (D,)), a weight parameter of ones (or None, registered as such), and
  ``forward(x)`` returning ``rms_norm(x, self.weight, self.eps)``.
* ``backward`` computes the gradients by hand, with tensor operations: no
  ``torch.autograd.grad``, no ``.backward()``, no forward re-run under ``torch.enable_grad()``.
  The grader detects those at run time, and compares with autograd through the built-in
  ``F.rms_norm``, including ``torch.autograd.gradcheck`` in float64 (skipped for a forward
  that rounds a float64 input to float32 anywhere).
* ``forward`` saves only what ``backward`` needs with ``ctx.save_for_backward``: x̂ (or x) and
  the per-row 1/rms, plus the weight; not the input's autograd graph, and not two copies of a
  tensor the size of x.
* ``forward`` leaves ``x`` as it was and ``backward`` leaves ``grad_out`` as it was: the caller
  owns both, and autograd may hand the same ``grad_out`` to other functions. No in-place
  operation on either (Liger-Kernel's ``in_place=True`` backward writes over it).
* A second backward (``create_graph=True``, double differentiation) is not required.

Torch parity (stretch)
----------------------
* ``eps=None`` means ``torch.finfo(dtype).eps`` of the dtype computed in: float32's for
  float16, bfloat16 and float32 inputs, float64's for float64 inputs.
* float64 inputs are computed in float64, in forward and in backward, every reduction
  included: torch computes in float32 only for half inputs.
* An unbatched ``x`` of shape (D,), one row with no leading dims, works forward and backward,
  as ``F.rms_norm`` allows, and its grad_weight is still (D,). Its leading dims are the empty
  tuple, and torch reads a sum over an empty tuple of dims as a sum over every dim, not over
  none: summed that way, grad_weight comes out a scalar, which autograd rejects.
* An ``x`` or a ``grad_out`` that is not contiguous works (an activation after a transpose;
  autograd hands you such gradients too): no ``.view()`` on either.
* float16/bfloat16 inputs: compute in float32; return y and grad_x in x's dtype, and
  grad_weight in the weight's: a float32 weight beside bfloat16 activations (mixed
  precision) gets a float32 gradient, as torch's does.

Pitfalls interviewers probe
---------------------------
* Forgetting the projection term −x̂ · mean(g · x̂): the gradient then ignores that the rms
  depends on x.
* The gradient reaching x̂ is dL/dy times the weight: dL/dx goes through w too.
* grad_weight sums over every dimension but the last, the batch *and* the sequence dims, not
  over dim 0 only.
* The same ε, inside the square root, in forward and in backward: compute r once and save it.
* What to save: x̂ and r (or x and r), not x and x̂ both, and nothing with autograd history;
  ``ctx.x = x`` keeps the input's graph alive.
* Half precision: the mean of squares overflows float16 (65504) for values above 256, and
  rounds badly in bfloat16; compute it in float32.

"From scratch" rules
--------------------
Use tensor operations: mean, sum, rsqrt, multiplication, broadcasting, ... Do not call
``F.rms_norm``, ``torch.ops.aten._fused_rms_norm`` or ``torch.ops.aten._fused_rms_norm_backward``
(nor any other built-in norm). The grader detects such calls at run time.

Grade yourself with::

    nox -s kata-rmsnorm-backward
"""

from __future__ import annotations

import torch
from torch import nn


class RMSNormFunction(torch.autograd.Function):
    """RMSNorm over the last dimension, with its gradients computed by hand."""

    @staticmethod
    def forward(ctx, x, weight, eps):  # type: ignore[no-untyped-def, override]
        """y = x / sqrt(mean(x²) + eps) * weight over the last dim; save for backward."""
        raise NotImplementedError("TODO: normalize, save what backward needs, return y")

    @staticmethod
    def backward(ctx, grad_out):  # type: ignore[no-untyped-def, override]
        """Return (grad_x, grad_weight, None), computed by hand."""
        raise NotImplementedError("TODO: the gradients of x and weight")


def rms_norm(
    x: torch.Tensor, weight: torch.Tensor | None = None, eps: float | None = None
) -> torch.Tensor:
    """RMSNorm of x over its last dimension, through RMSNormFunction."""
    raise NotImplementedError("TODO: return RMSNormFunction.apply(...)")


class RMSNorm(nn.Module):
    """torch.nn.RMSNorm over the last dimension, its gradients from RMSNormFunction."""

    def __init__(
        self,
        normalized_shape: int | tuple[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
    ) -> None:
        super().__init__()
        raise NotImplementedError("TODO: normalized_shape, eps, elementwise_affine, weight")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: return rms_norm(x, self.weight, self.eps)")
