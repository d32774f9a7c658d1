"""Kata: GroupNorm from scratch.

What it is
----------
Group normalization (Wu & He, 2018) splits the C channels of each sample into G groups of
C / G consecutive channels and standardizes each group over its channels and all positions,
then applies a learnable per-channel scale and shift. Like LayerNorm it never looks across the
batch, so it behaves the same for a batch of 2 as for 256 and in training as in evaluation:
that is why detection and segmentation models (Mask R-CNN, diffusion U-Nets), which train with
a few large images per GPU, use it where BatchNorm's statistics would be too noisy. G = 1 is
LayerNorm over (C, *); G = C is InstanceNorm.

The maths
---------
For sample n and group g, over the m = (C/G) · H · W values of its channels and positions:

    μ_ng  = (1/m) · Σ x                  mean of the group
    σ²_ng = (1/m) · Σ (x − μ_ng)²        biased variance (divide by m)
    x̂     = (x − μ_ng) / √(σ²_ng + ε)
    y     = γ_c · x̂ + β_c                γ = weight, β = bias, both per channel, shape (C,)

Shapes
------
    input x : (N, C, *)    e.g. (N, C), (N, C, L) or (N, C, H, W)
    output  : same shape and dtype as x
    weight, bias : (C,)

The contract (interview core)
-----------------------------
* ``GroupNorm(num_groups, num_channels, eps=1e-5, affine=True)``; keep the four arguments as
  attributes of the same names.
* Parameters ``weight`` (ones) and ``bias`` (zeros), one per *channel*, named as torch names
  them so that a ``torch.nn.GroupNorm`` state_dict loads into yours and back; both ``None``
  with ``affine=False`` (``self.register_parameter("weight", None)``).
* ``forward(x)`` normalizes each sample's groups of consecutive channels as above, returning
  x's dtype on x's device; gradients flow by plain autograd.

Torch parity (stretch)
----------------------
* A float64 input is computed in float64: torch computes in float32 only for half inputs.
* ``num_channels`` not divisible by ``num_groups`` raises ``ValueError`` in ``__init__``.
* Its message is torch's: ``num_channels (6) must be divisible by num_groups (4)``.
* A non-contiguous input (a transposed view) is normalized like any other: ``view`` needs a
  contiguous layout, ``reshape`` copies when it must.
* float16/bfloat16 inputs: statistics in float32, the result in the input's dtype.
* An empty batch (N = 0) returns an empty output.

Pitfalls interviewers probe
---------------------------
* Which channels form a group: reshape to (N, G, C/G, *), not (N, C/G, G, *), which groups
  every G-th channel together.
* Statistics per sample: reducing over dim 0 too turns it into BatchNorm's axis.
* The affine transform is per channel (C values), not per group (G values): apply it after
  reshaping back to (N, C, *).
* Biased variance, eps inside the square root, as in LayerNorm.
* Why GroupNorm for small batches, and how it relates to LayerNorm and InstanceNorm.
* Half precision: upcast only half inputs (``x.float()`` would also round float64 to float32).

"From scratch" rules
--------------------
Use tensor operations: reshape/view, mean, var, sum, square, rsqrt, broadcasting, ... Do not
call the built-in layer or its functional form: ``F.group_norm``, ``torch.group_norm``,
``torch.native_group_norm``, ``nn.GroupNorm``, nor tricks through ``F.layer_norm``,
``F.instance_norm`` or ``F.batch_norm``. The grader detects such calls at run time.

Grade yourself with::

    nox -s kata-groupnorm
"""

from __future__ import annotations

import torch
from torch import nn


class GroupNorm(nn.Module):
    r"""Applies Group Normalization over a mini-batch of inputs.

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} * \gamma + \beta

    with the mean and variance taken per sample over each group of ``num_channels /
    num_groups`` consecutive channels and all positions.

    Args:
        num_groups: G, the number of groups to separate the channels into.
        num_channels: C, the number of channels expected in the input (dim 1).
        eps: a value added to the variance for numerical stability. Default: 1e-5
        affine: if ``True``, learnable per-channel ``weight`` (ones) and ``bias`` (zeros).
            Default: ``True``

    Shape:
        - Input: :math:`(N, C, *)`
        - Output: :math:`(N, C, *)`, same shape as the input
    """

    def __init__(
        self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True
    ) -> None:
        super().__init__()
        raise NotImplementedError("TODO: store the arguments; register weight and bias")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: implement forward")
