"""Kata: LayerNorm's backward pass, derived and written by hand.

What it is
----------
Autograd differentiates LayerNorm for you; the interview asks you to do it yourself, as in
cs231n and llm.c: write a ``torch.autograd.Function`` whose ``backward`` computes the gradients
of the input, the weight and the bias from the incoming gradient, with no autograd inside.
Fused kernels (Apex, Triton, llm.c) do exactly this to save memory and time: they keep only
x̂ (or x with its mean) and 1/σ per row from the forward pass, and compute the gradient in one
pass over the row.

The maths
---------
Over the last dimension of size D, for each row:

    μ = mean(x),  σ² = mean((x − μ)²)  (biased),  r = 1/√(σ² + ε),  x̂ = (x − μ) · r
    y = x̂ · w + b

With g = dL/dy · w (the gradient reaching x̂):

    dL/db = Σ_rows dL/dy             dL/dw = Σ_rows dL/dy · x̂
    dL/dx = r · (g − mean(g) − x̂ · mean(g · x̂))        means over the last dimension

The two mean terms are the gradient flowing back through μ and through σ²: every element of
the row moves the row's statistics.

Shapes
------
    x: (*, D)    weight, bias: (D,)    output and grad_x: like x    grad_weight, grad_bias: (D,)

The contract (interview core)
-----------------------------
* ``class LayerNormFunction(torch.autograd.Function)`` with static methods
  ``forward(ctx, x, weight, bias, eps)``, normalizing over the last dimension, and
  ``backward(ctx, grad_out)``, returning ``(grad_x, grad_weight, grad_bias, None)`` (None for
  eps, which takes no gradient).
* ``layer_norm(x, weight, bias, eps=1e-5)`` returns ``LayerNormFunction.apply(x, weight, bias,
  eps)``.
* ``x`` is ``(*, D)`` with at least one leading dim: rows of a batch, ``(N, D)`` or
  ``(B, T, D)``. An unbatched ``x`` of shape (D,) is torch parity, below.
* ``backward`` computes the gradients by hand, with tensor operations: no
  ``torch.autograd.grad``, no ``.backward()``, no forward re-run under ``torch.enable_grad()``.
  The grader detects those at run time, and compares with autograd through the built-in
  ``F.layer_norm``, including ``torch.autograd.gradcheck`` in float64 (skipped for a forward
  that computes a float64 input in float32).
* ``forward`` takes the variance of the centred values, mean((x − μ)²) over each row: it
  stays exact in float32 when the mean is large against the spread, where the shortcut
  E[x²] − E[x]² loses every digit (checked at a mean of 1000).
* ``forward`` saves only what ``backward`` needs with ``ctx.save_for_backward``: x̂ (or x with
  its mean) and the per-row 1/σ, plus the weight; not the input's autograd graph, and not two
  copies of a tensor the size of x.
* A second backward (``create_graph=True``, double differentiation) is not required.

Torch parity (stretch)
----------------------
* float64 inputs are computed in float64, in forward and in backward: torch computes in
  float32 only for half inputs.
* An unbatched ``x`` of shape (D,), one row with no leading dims, works forward and backward,
  as ``F.layer_norm`` allows, and grad_weight and grad_bias are still (D,). Its leading dims
  are the empty tuple, and torch reads a sum over an empty tuple of dims as a sum over every
  dim, not over none: summed that way, the gradients come out as scalars.
* An ``x`` or a ``grad_out`` that is not contiguous works (an activation after a transpose;
  autograd hands you such gradients too): no ``.view()`` on either.
* float16/bfloat16 inputs: compute in float32; return y and grad_x in x's dtype, and the
  weight's and the bias's gradients in their own: float32 parameters beside bfloat16
  activations (mixed precision) get float32 gradients, as torch's do.

Pitfalls interviewers probe
---------------------------
* Forgetting either mean term: without mean(g) the gradient ignores μ; without
  x̂ · mean(g · x̂) it ignores σ².
* grad_weight and grad_bias sum over every dimension but the last, the batch *and* the
  sequence dims, not over dim 0 only.
* The same ε, inside the square root, in forward and in backward: compute r once and save it.
* The variance is the biased one, as in forward.
* What to save: x̂ and r (or x, μ and r), not x and x̂ both, and nothing with autograd
  history; ``ctx.x = x`` keeps the input's graph alive.
* How a fused kernel saves memory: it keeps μ and r per row (2 numbers, not D) and recomputes
  x̂ from x in backward.

"From scratch" rules
--------------------
Use tensor operations: mean, sum, rsqrt, multiplication, broadcasting, ... Do not call
``F.layer_norm``, ``torch.native_layer_norm`` or ``torch.ops.aten.native_layer_norm_backward``
(nor any other built-in norm). The grader detects such calls at run time.

Grade yourself with::

    nox -s kata-layernorm-backward
"""

from __future__ import annotations

import torch


class LayerNormFunction(torch.autograd.Function):
    """LayerNorm over the last dimension, with its gradients computed by hand."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):  # type: ignore[no-untyped-def, override]
        """y = (x - mean) / sqrt(var + eps) * weight + bias over the last dim; save for backward."""
        raise NotImplementedError("TODO: normalize, save what backward needs, return y")

    @staticmethod
    def backward(ctx, grad_out):  # type: ignore[no-untyped-def, override]
        """Return (grad_x, grad_weight, grad_bias, None), computed by hand."""
        raise NotImplementedError("TODO: the gradients of x, weight and bias")


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """LayerNorm of x over its last dimension, through LayerNormFunction."""
    raise NotImplementedError("TODO: return LayerNormFunction.apply(...)")
