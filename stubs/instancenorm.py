"""Kata: InstanceNorm1d and InstanceNorm2d from scratch.

What it is
----------
Instance normalization (Ulyanov et al., 2016) standardizes every channel of every sample on
its own, over that channel's positions only (L, or H·W): no statistics are shared across the
batch or across channels. It was made for style transfer, where each image's contrast (its
per-channel mean and spread) is exactly the "style" the network should be free to replace;
it is also used in GAN generators and in some segmentation and audio models. It equals
GroupNorm with one channel per group (G = C), and BatchNorm applied to one sample at a time.

The maths
---------
For sample n and channel c, over the m = L (1d) or m = H·W (2d) values of x[n, c]:

    μ_nc  = (1/m) · Σ x                     mean of that sample's channel
    σ²_nc = (1/m) · Σ (x − μ_nc)²           biased variance: used to normalize
    x̂     = (x − μ_nc) / √(σ²_nc + ε)
    y     = γ_c · x̂ + β_c                   only with affine=True; γ = weight, β = bias, (C,)

With track_running_stats=True, each training step folds the batch's statistics into running
ones, per channel, averaged over the N samples (the variance made unbiased over m values):

    running_mean ← (1 − momentum) · running_mean + momentum · (1/N) Σ_n μ_nc
    running_var  ← (1 − momentum) · running_var  + momentum · (1/N) Σ_n σ²_nc · m/(m − 1)

and eval mode then normalizes every sample with running_mean and running_var instead.

Shapes
------
    InstanceNorm1d: input (N, C, L), or one unbatched sample (C, L)
    InstanceNorm2d: input (N, C, H, W), or one unbatched sample (C, H, W)
    output: same shape and dtype as the input
    weight, bias, running_mean, running_var: (C,)      num_batches_tracked: () of dtype long

Note the 2D input of InstanceNorm1d: unlike BatchNorm1d's (N, C), it is one sample (C, L).

The contract (interview core)
-----------------------------
* ``InstanceNorm1d(num_features, eps=1e-5, momentum=0.1, affine=False,
  track_running_stats=False)`` and ``InstanceNorm2d`` alike; keep the five arguments as
  attributes of the same names. Note the defaults: unlike BatchNorm, affine and running
  statistics are both OFF.
* With ``affine=True``: parameters ``weight`` (ones) and ``bias`` (zeros) of shape (C,);
  otherwise both ``None`` (``self.register_parameter("weight", None)``).
* With ``track_running_stats=True``: buffers ``running_mean`` (zeros), ``running_var`` (ones)
  and ``num_batches_tracked`` (``torch.tensor(0, dtype=torch.long)``), via ``register_buffer``,
  so that a ``torch.nn`` state_dict loads into yours and back; otherwise all three ``None``.
* Training, or any mode without running statistics: normalize with each sample's own
  statistics; in training with running statistics, update them as above without autograd
  history. Eval with running statistics: normalize with them and leave them unchanged.
* An unbatched input is normalized as a batch of one sample, and returned unbatched: only the
  batch dim goes, a (1, L) sample stays (1, L). The caller's x keeps its shape and values.
* The output has x's shape, dtype and device; gradients flow by plain autograd.

Torch parity (stretch)
----------------------
* A float64 input is computed in float64: torch computes in float32 only for half inputs.
* ``momentum=None`` is NOT BatchNorm's cumulative average: ``nn.InstanceNorm*`` passes momentum
  0.0 to ``F.instance_norm``, so the running statistics never move from their 0 and 1.
* ``num_batches_tracked`` exists only for the state_dict: instance norm never increments it.
* Errors, as torch raises them: ``ValueError("expected 2D or 3D input (got 4D input)")`` for
  InstanceNorm1d, ``ValueError("expected 3D or 4D input (got 2D input)")`` for
  InstanceNorm2d; one value per (sample, channel) when using the input's statistics (L or H·W
  == 1): ``ValueError("Expected more than 1 spatial element when training, got input size
  ...")``.
* ``num_features`` unlike the channel dim (dim 1, or 0 unbatched): with ``affine=True`` a
  ``ValueError("expected input's size at dim=1 to match num_features (4), but got: 3.")``;
  with ``affine=False`` num_features is unused, so torch only warns (``warnings.warn``, a
  ``UserWarning``: "input's size at dim=1 does not match num_features. ...") and normalizes.
  When the two match, torch neither raises nor warns.
* A training step updates the running statistics in place: they stay the tensors registered,
  in the layer's dtype (a float16 layer's stay float16, though computed in float32).
* A non-contiguous input (a transposed or cropped view) is normalized like any other:
  ``view`` needs a contiguous layout, ``reshape`` copies when it must.
* A float16/bfloat16 input is computed in float32, its statistics too, and returned in its
  own dtype, in a half layer and in a float32 one (as under autocast).

Pitfalls interviewers probe
---------------------------
* Which dims: the spatial ones only, (2,) for (N, C, L) and (2, 3) for (N, C, H, W), with
  keepdim so that the (N, C) statistics broadcast back; not dim 0 (that is BatchNorm), not
  dim 1 (that is LayerNorm).
* The defaults: ``affine=False`` and ``track_running_stats=False``. Why would style transfer
  want neither?
* Without running statistics eval mode still normalizes with the input's own statistics:
  ``self.training`` alone does not decide.
* Biased variance to normalize, unbiased for ``running_var``; the running statistics are
  per channel, so the N samples' statistics are averaged (not pooled over N·m values, which
  is BatchNorm's variance and also counts the spread between samples' means).
* eps inside the square root: √(σ² + ε), not √σ² + ε.
* Numerically stable: the shortcut σ² = E[x²] − E[x]² loses the variance's digits when the
  mean is large beside the spread (a mean of 1000 and a spread of 1, in float32). Centre
  first, then average the squares.
* Update the buffers under ``torch.no_grad()`` (or from detached values), in place.

"From scratch" rules
--------------------
Use tensor operations: mean, var, sum, square, rsqrt, view/reshape, in-place mul_/add_, ...
Do not call the built-in layer or its functional form: ``F.instance_norm``,
``torch.instance_norm``, ``nn.InstanceNorm1d/2d``, nor ``F.batch_norm`` / ``F.group_norm`` /
``F.layer_norm`` tricks, and do not subclass torch's norm classes (``nn.InstanceNorm1d/2d``,
their base ``_NormBase``). The grader detects such calls and classes at run time.

The layout, as torch's: ``_InstanceNorm`` holds everything shared, and the two public classes
only say which ranks they take (``_check_input_dim``) and the rank of one unbatched sample
(``_get_no_batch_dim``: 2 for (C, L), 3 for (C, H, W)). You may write the two classes in
full instead; the grader uses only ``InstanceNorm1d`` and ``InstanceNorm2d``.

Grade yourself with::

    nox -s kata-instancenorm
"""

from __future__ import annotations

import torch
from torch import nn


class _InstanceNorm(nn.Module):
    r"""Shared base: per-sample, per-channel normalization, optional affine and running stats.

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} * \gamma + \beta

    Args:
        num_features: :math:`C`, the number of channels (dim 1, or dim 0 unbatched).
        eps: a value added to the variance for numerical stability. Default: 1e-5
        momentum: weight of the new statistics in the running averages; ``None`` as torch
            treats it (see the module docstring). Default: 0.1
        affine: if ``True``, learnable per-channel ``weight`` (ones) and ``bias`` (zeros).
            Default: ``False``
        track_running_stats: if ``True``, keep ``running_mean``, ``running_var`` and
            ``num_batches_tracked`` buffers and normalize with them in eval mode; if ``False``,
            the buffers are ``None`` and the input's statistics are used in both modes.
            Default: ``False``
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
    ) -> None:
        super().__init__()
        raise NotImplementedError(
            "TODO: store the hyper-parameters; register weight/bias and the running-stat buffers"
        )

    def _check_input_dim(self, x: torch.Tensor) -> None:
        raise NotImplementedError("TODO: raise ValueError for an input of the wrong rank")

    def _get_no_batch_dim(self) -> int:
        raise NotImplementedError("TODO: the rank of one unbatched sample")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: implement forward")


class InstanceNorm1d(_InstanceNorm):
    r"""Applies Instance Normalization over a 2D (unbatched) or 3D (batched) input.

    Args: see :class:`_InstanceNorm`.

    Shape:
        - Input: :math:`(N, C, L)` or :math:`(C, L)`
        - Output: same shape as the input
    """

    def _get_no_batch_dim(self) -> int:
        raise NotImplementedError("TODO: an unbatched sample is (C, L)")

    def _check_input_dim(self, x: torch.Tensor) -> None:
        raise NotImplementedError("TODO: accept only 2D or 3D inputs")


class InstanceNorm2d(_InstanceNorm):
    r"""Applies Instance Normalization over a 3D (unbatched) or 4D (batched) input.

    Args: see :class:`_InstanceNorm`.

    Shape:
        - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`
        - Output: same shape as the input
    """

    def _get_no_batch_dim(self) -> int:
        raise NotImplementedError("TODO: an unbatched sample is (C, H, W)")

    def _check_input_dim(self, x: torch.Tensor) -> None:
        raise NotImplementedError("TODO: accept only 3D or 4D inputs")
