"""Kata: LayerNorm from scratch.

What it is
----------
Layer normalization (Ba, Kiros & Hinton, 2016) standardizes every sample on its own, over its
trailing feature dimensions, then applies a learnable per-element scale and shift. Nothing is
shared across the batch, so it behaves identically in training and evaluation, works with a
batch of one and with variable-length sequences. That is why Transformers (the original
encoder/decoder, BERT, GPT-2, ViT, ...) use it after or before every attention and MLP
sublayer, where BatchNorm would be a poor fit.

The maths
---------
With H = the number of elements in the normalized dims (the product of normalized_shape):

    μ  = (1/H) · Σᵢ xᵢ                     mean over the normalized dims
    σ² = (1/H) · Σᵢ (xᵢ − μ)²              biased variance (divide by H, not H − 1)
    x̂ᵢ = (xᵢ − μ) / √(σ² + ε)              ε inside the square root
    yᵢ = γᵢ · x̂ᵢ + βᵢ                       γ = weight, β = bias, both of shape normalized_shape

Shapes
------
    normalized_shape = (D₁, ..., D_k)
    input  x : (*, D₁, ..., D_k)    any number of leading dims, even zero-sized ones
    output y : same shape and dtype as x
    weight, bias : normalized_shape
Example: x of shape (batch, seq, d_model) with normalized_shape = d_model normalizes each token
vector; normalized_shape = (seq, d_model) normalizes each whole sequence.

The contract (interview core)
-----------------------------
* ``LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, bias=True)``; keep
  ``normalized_shape`` as a tuple (an int n becomes (n,)) and ``eps``.
* Parameters ``weight`` (ones) and ``bias`` (zeros) of shape normalized_shape, named as torch
  names them, so that a ``torch.nn.LayerNorm`` state_dict loads into yours and back. With
  ``elementwise_affine=False`` both are ``None`` (``self.register_parameter("weight", None)``).
* ``forward(x)`` normalizes each sample over its last ``len(normalized_shape)`` dims as above,
  returning x's dtype on x's device; gradients flow by plain autograd.
* No statistics are kept between calls: eval mode computes exactly what training does.

Torch parity (stretch)
----------------------
* A float64 input is computed in float64: torch computes in float32 only for half inputs.
* ``bias=False``: a weight but no bias (``bias`` is ``None``).
* Trailing dims that are not ``normalized_shape`` raise ``RuntimeError`` (or ``ValueError``)
  with both shapes in the message.
* A non-contiguous input (a transposed view) is normalized like any other: ``view`` needs a
  contiguous layout, ``reshape`` copies when it must.
* float16/bfloat16 inputs: statistics in float32, the result in the input's dtype.
* An empty batch (a leading dim of size 0) returns an empty output.

Pitfalls interviewers probe
---------------------------
* Which dims? The *last* k dims, k = len(normalized_shape): not dim 0 (that is BatchNorm),
  and not just dim -1 when normalized_shape has two entries.
* Biased variance: ``unbiased=True`` (torch.var's default!) gives the wrong answer.
* Numerical stability: the shortcut Var = E[x²] − E[x]² loses all precision when the mean is
  large relative to the spread (e.g. values around 1e4 with std 1 in float32). Compute the mean
  first, then the mean of the squared centred values.
* ε goes inside the square root, so a constant row (σ² = 0) gives 0 instead of NaN/inf.
* Broadcasting: keep the reduced dims (keepdim) so μ and σ² line up with x.
* Parameters, not plain tensors: ``.to()``, the optimizer and ``state_dict`` only see
  ``nn.Parameter`` s and buffers.
* Half precision: float16 overflows above 65504, so x² of an activation of 300 is already inf.
  Upcast only half inputs: ``x.float()`` would also round a float64 input to float32.

"From scratch" rules
--------------------
Use tensor operations: mean, var, sum, square, sqrt, rsqrt, broadcasting, ... Do not call the
built-in layer or its functional form: ``F.layer_norm``, ``torch.layer_norm``,
``torch.native_layer_norm``, ``nn.LayerNorm``, nor tricks through ``F.group_norm``,
``F.instance_norm`` or ``F.batch_norm``. The grader detects such calls at run time.

Grade yourself with::

    nox -s kata-layernorm
"""

from __future__ import annotations

import torch
from torch import nn


class LayerNorm(nn.Module):
    r"""Applies Layer Normalization over the trailing dims of the input.

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} * \gamma + \beta

    The mean and (biased) variance are computed over the last ``len(normalized_shape)`` dims.

    Args:
        normalized_shape (int or list or tuple): shape of the trailing dims to normalize
            over. An int ``n`` is treated as ``(n,)``.
        eps: a value added to the variance for numerical stability. Default: 1e-5
        elementwise_affine: if ``True``, learnable per-element ``weight`` (initialised to
            ones) and ``bias`` (zeros). Default: ``True``
        bias: if ``False``, no ``bias`` even when ``elementwise_affine`` is ``True``.
            Default: ``True``

    Shape:
        - Input: :math:`(*, \text{normalized\_shape})`
        - Output: same shape as the input
    """

    def __init__(
        self,
        normalized_shape: int | list[int] | tuple[int, ...],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
    ) -> None:
        super().__init__()
        raise NotImplementedError(
            "TODO: store normalized_shape (as a tuple), eps, elementwise_affine; "
            "register weight and bias"
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: implement forward")
