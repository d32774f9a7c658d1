"""Kata: BatchNorm's backward pass (training mode), derived and written by hand.

What it is
----------
In training, BatchNorm normalizes every channel with the mean and variance of the current
batch. Its backward pass is the classic cs231n exercise: the gradient of one sample depends on
every other sample of the batch, because they all share the statistics. Write a
``torch.autograd.Function`` whose ``backward`` computes the gradients of the input, the weight
and the bias from the incoming gradient, with no autograd inside. (Running statistics are not
part of this kata: see the BatchNorm kata.)

The maths
---------
For each channel c, over the m = N·H·W values of that channel (m = N for (N, C) inputs):

    μ = mean(x),  σ² = mean((x − μ)²)  (biased),  r = 1/√(σ² + ε),  x̂ = (x − μ) · r
    y = x̂ · w_c + b_c

With g = dL/dy · w_c (the gradient reaching x̂), and means over the channel's m values:

    dL/db_c = Σ dL/dy             dL/dw_c = Σ dL/dy · x̂
    dL/dx   = r · (g − mean(g) − x̂ · mean(g · x̂))

Shapes
------
    x: (N, C) or (N, C, H, W)    weight, bias: (C,)    output, grad_x: like x
    grad_weight, grad_bias: (C,)

The contract (interview core)
-----------------------------
* ``class BatchNormFunction(torch.autograd.Function)`` with static methods
  ``forward(ctx, x, weight, bias, eps)``, which normalizes with the batch statistics over every
  dim but 1, and ``backward(ctx, grad_out)``, returning ``(grad_x, grad_weight, grad_bias,
  None)`` (None for eps, which takes no gradient).
* ``batch_norm_train(x, weight, bias, eps=1e-5)`` returns ``BatchNormFunction.apply(x, weight,
  bias, eps)``.
* ``backward`` computes the gradients by hand, with tensor operations: no
  ``torch.autograd.grad``, no ``.backward()``, no forward re-run under ``torch.enable_grad()``.
  The grader detects those at run time, and compares with autograd through the built-in
  ``F.batch_norm(..., training=True)``, including ``torch.autograd.gradcheck`` in float64
  (skipped for a forward that computes a float64 input in float32).
* ``forward`` takes the variance of the centred values, mean((x − μ)²) over each channel: it
  stays exact in float32 when the mean is large against the spread, where the shortcut
  E[x²] − E[x]² loses every digit (checked at a mean of 1000).
* ``forward`` saves only what ``backward`` needs with ``ctx.save_for_backward``: x̂ (or x with
  the channel means) and the per-channel 1/σ, plus the weight; not the input's autograd graph,
  and not two copies of a tensor the size of x.
* A second backward (``create_graph=True``, double differentiation) is not required.

Torch parity (stretch)
----------------------
* float64 inputs are computed in float64, in forward and in backward: torch computes in
  float32 only for half inputs.
* An ``x`` or a ``grad_out`` that is not contiguous works (channels last, or after a
  permute): no ``.view()`` on either.
* float16/bfloat16 inputs: compute in float32; return y and grad_x in x's dtype, and the
  weight's and the bias's gradients in their own: float32 parameters beside bfloat16
  activations (mixed precision) get float32 gradients, as torch's do.

Pitfalls interviewers probe
---------------------------
* Which dims: every dim except the channel dim 1, for the statistics *and* for every
  reduction in backward: (0,) for (N, C), (0, 2, 3) for (N, C, H, W), not dim 0 alone.
* Forgetting either batch-mean term of dL/dx: without them each sample's gradient ignores
  that it moved the batch's statistics.
* The same ε, inside the square root, in forward and backward: compute r once and save it.
* The biased variance, as in forward (the unbiased one is only for running statistics).
* Why BatchNorm's backward couples the samples of a batch, and what that means for tiny
  batches and for splitting a batch across GPUs.

"From scratch" rules
--------------------
Use tensor operations: mean, sum, rsqrt, view/reshape, multiplication, broadcasting, ... Do not
call ``F.batch_norm``, ``torch.batch_norm``, ``torch.native_batch_norm`` or
``torch.ops.aten.native_batch_norm_backward`` (nor any other built-in norm). The grader detects
such calls at run time.

Grade yourself with::

    nox -s kata-batchnorm-backward
"""

from __future__ import annotations

import torch


class BatchNormFunction(torch.autograd.Function):
    """Training-mode batch normalization, with its gradients computed by hand."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):  # type: ignore[no-untyped-def, override]
        """y = (x - mean) / sqrt(var + eps) * weight + bias per channel; save for backward."""
        raise NotImplementedError("TODO: normalize with the batch statistics, save, return y")

    @staticmethod
    def backward(ctx, grad_out):  # type: ignore[no-untyped-def, override]
        """Return (grad_x, grad_weight, grad_bias, None), computed by hand."""
        raise NotImplementedError("TODO: the gradients of x, weight and bias")


def batch_norm_train(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """Training-mode batch normalization of x (N, C, *) through BatchNormFunction."""
    raise NotImplementedError("TODO: return BatchNormFunction.apply(...)")
