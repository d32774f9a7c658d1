"""Kata: DyT, Dynamic Tanh, the normalization-free drop-in for LayerNorm.

What it is
----------
"Transformers without Normalization" (Zhu, Chen, He, LeCun and Liu, 2025) noticed that a
trained LayerNorm maps its inputs much like a scaled tanh: linear near zero, squashing the few
large activations. DyT replaces the LayerNorm with exactly that, an element-wise
tanh(α · x) with one learnable scalar α, followed by LayerNorm's per-channel weight and bias.
No statistics are computed at all: no mean, no variance, nothing shared between the elements
of a token. Swapped in for every LayerNorm of a ViT, a ConvNeXt, DiT or LLaMA, it trains to
the same accuracy, and is cheaper, being one element-wise pass.

The maths
---------
    y = weight · tanh(α · x) + bias

    α       one learnable scalar, shared by every channel, initialised to alpha_init_value
            (0.5 by default; the paper lowers it for large language models)
    weight  (C,), initialised to ones; bias (C,), initialised to zeros, as LayerNorm's

α scales the input inside the tanh; weight and bias act after it, per channel.

Shapes
------
    channels_last=True (default), as LayerNorm after it in a Transformer:
        x : (*, C)        the channels are the last dim; any leading dims
    channels_last=False, as a LayerNorm2d in a ConvNeXt:
        x : (N, C, H, W)  the channels are dim 1; weight and bias broadcast as (C, 1, 1)
    output y : x's shape and dtype

The contract (interview core)
-----------------------------
* ``DyT(num_features, alpha_init_value=0.5, channels_last=True)``.
* Parameters named ``alpha``, ``weight`` and ``bias``: α one learnable scalar (an
  ``nn.Parameter`` of one element, shared by every channel) filled with ``alpha_init_value``;
  weight ones and bias zeros, each of shape ``(num_features,)``.
* ``forward(x)`` returns weight · tanh(α · x) + bias with the channels on the last dim, or on
  dim 1 of an (N, C, H, W) input when ``channels_last=False``; x's shape and dtype; gradients
  reach α, weight and bias by plain autograd.
* x is left as it was: the caller still owns it (no in-place ``x.mul_`` or ``x *= α``).

Torch parity (stretch)
----------------------
* α has shape (1,), as in the official code (``torch.ones(1) * alpha_init_value``), so that
  the official ``DynamicTanh``'s checkpoints load into yours (a 0-dim α computes the same, but
  its state_dict does not match).
* A float64 input is computed in float64.
* float16 and bfloat16 inputs (the module in the same dtype) return their own dtype.

Pitfalls interviewers probe
---------------------------
* α is a scalar, not one per channel: the per-channel scale is the weight's job.
* α goes inside the tanh, tanh(α · x): α · tanh(x) only rescales an output that is already
  squashed at ±1, and never changes where the tanh saturates.
* The weight goes outside: tanh(weight · α · x) + bias bounds every channel's output by ±1
  around its bias.
* α must learn: a buffer, a plain float or its value read out with item() gets no gradient.
* Channels first: weight and bias of shape (C,) broadcast against the last dim, so they need
  the shape (C, 1, 1) to line up with dim 1 of (N, C, H, W).
* The initial values matter: α = alpha_init_value (0.5 by default, not 1), weight ones, bias
  zeros, so that the untrained layer is tanh(x / 2).
* A tensor created in a dtype of its own (float64 from numpy, say) promotes the output.

"From scratch" rules
--------------------
Use tensor operations: tanh, multiplication, addition, broadcasting.

Grade yourself with::

    nox -s kata-dyt
"""

from __future__ import annotations

import torch
from torch import nn


class DyT(nn.Module):
    r"""Dynamic Tanh: an element-wise, normalization-free replacement for LayerNorm.

    .. math::
        y = \gamma \cdot \tanh(\alpha x) + \beta

    Args:
        num_features: C, the number of channels.
        alpha_init_value: the initial value of the learnable scalar α. Default: 0.5
        channels_last: if ``True``, the channels are x's last dim (a Transformer's tokens);
            if ``False``, dim 1 of an (N, C, H, W) input. Default: ``True``

    Shape:
        - Input: :math:`(*, C)`, or :math:`(N, C, H, W)` with ``channels_last=False``
        - Output: same shape as the input
    """

    def __init__(
        self, num_features: int, alpha_init_value: float = 0.5, channels_last: bool = True
    ) -> None:
        super().__init__()
        raise NotImplementedError("TODO: register alpha (one element), weight and bias")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: weight * tanh(alpha * x) + bias, per channel")
