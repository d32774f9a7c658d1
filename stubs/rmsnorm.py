"""Kata: RMSNorm from scratch.

What it is
----------
Root Mean Square Layer Normalization (Zhang & Sennrich, 2019) is LayerNorm without the
centring: each sample is divided by the root mean square of its trailing features and then
scaled by a learnable gain. There is no mean subtraction and no bias, which saves a reduction
and some memory traffic while training as well as LayerNorm in practice. LLaMA-style LLMs
(LLaMA, Mistral, Qwen, Gemma, ...) and T5 use it, usually in the pre-norm position.

The maths
---------
With H = the number of elements in the normalized dims (the product of normalized_shape):

    RMS(x) = √( (1/H) · Σᵢ xᵢ² + ε )
    yᵢ     = xᵢ / RMS(x) · γᵢ                 γ = weight, of shape normalized_shape

Note that the mean of the squares is not the variance: nothing is subtracted first.

Shapes
------
    normalized_shape = (D₁, ..., D_k)
    input  x : (*, D₁, ..., D_k)
    output y : same shape and same dtype as x
    weight   : normalized_shape

The contract (interview core)
-----------------------------
* ``RMSNorm(normalized_shape, eps=None, elementwise_affine=True)``; keep ``normalized_shape`` as
  a tuple (an int n becomes (n,)), ``eps`` and ``elementwise_affine`` as given.
* Parameter ``weight`` (ones, shape normalized_shape), named as torch names it so that a
  ``torch.nn.RMSNorm`` state_dict loads into yours and back; ``None`` without
  ``elementwise_affine`` (``self.register_parameter("weight", None)``).
* ``forward(x)`` divides each sample by the RMS of its last ``len(normalized_shape)`` dims as
  above, then scales by weight; gradients flow by plain autograd.
* No statistic is kept between calls: eval mode computes exactly what training does.
* The output has x's shape, dtype and device; ``.to(dtype)`` and ``.to(device)`` move the weight.

Torch parity (stretch)
----------------------
* The dtype policy: a float64 input is computed in float64 (torch upcasts only float16 and
  bfloat16; LLaMA's ``x.float()`` also rounds float64), and a float16 input of magnitude 300
  does not overflow (300² = 90000 > 65504, float16's max).
* ``eps=None`` (the default) means the machine epsilon of the dtype the computation runs in.
  Find out which dtype that is for float16/bfloat16 inputs: ``torch.finfo(torch.float16).eps``
  is 8192 times float32's, which visibly changes outputs with a small RMS.
* float16/bfloat16 inputs computed as torch does and returned in the input's dtype.
* Trailing dims that are not ``normalized_shape`` raise ``RuntimeError`` (or ``ValueError``)
  with both shapes in the message.
* An empty batch (a leading dim of size 0) returns an empty output.

Pitfalls interviewers probe
---------------------------
* Which dims: the last len(normalized_shape) dims, with keepdim so the result broadcasts.
* The *mean* of the squares: the sum gives the L2 norm, off by sqrt(n).
* ε is added to the mean square, inside the square root (rsqrt works nicely here).
* Mixed precision: why would you upcast before squaring, and where do you cast back? Upcast
  only half inputs: ``x.float()`` would also round a float64 input to float32.
* RMSNorm versus LayerNorm: what is lost by not centring, and why does it not seem to matter?

"From scratch" rules
--------------------
Use tensor operations: square, pow, mean, sqrt, rsqrt, type casts, broadcasting, ... Do not
call the built-in layer or its functional form: ``F.rms_norm``, ``torch.rms_norm``,
``torch._fused_rms_norm``, ``nn.RMSNorm``, nor any other built-in norm (``F.layer_norm``,
``F.group_norm``, ...). The grader detects such calls at run time.

Grade yourself with::

    nox -s kata-rmsnorm
"""

from __future__ import annotations

import torch
from torch import nn


class RMSNorm(nn.Module):
    r"""Applies Root Mean Square Layer Normalization over the trailing dims of the input.

    .. math::
        y_i = \frac{x_i}{\mathrm{RMS}(x)} * \gamma_i, \quad
        \mathrm{RMS}(x) = \sqrt{\epsilon + \frac{1}{n} \sum_{i=1}^{n} x_i^2}

    Args:
        normalized_shape (int or list or tuple): shape of the trailing dims to normalize
            over. An int ``n`` is treated as ``(n,)``.
        eps: a value added to the mean square for numerical stability. ``None`` uses the
            machine epsilon of the computation dtype (see the module docstring).
            Default: ``None``
        elementwise_affine: if ``True``, a learnable per-element ``weight`` initialised to
            ones. Default: ``True``

    Shape:
        - Input: :math:`(*, \text{normalized\_shape})`
        - Output: same shape and dtype as the input
    """

    def __init__(
        self,
        normalized_shape: int | list[int] | tuple[int, ...],
        eps: float | None = None,
        elementwise_affine: bool = True,
    ) -> None:
        super().__init__()
        raise NotImplementedError(
            "TODO: store normalized_shape (as a tuple), eps, elementwise_affine; register weight"
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: implement forward")
