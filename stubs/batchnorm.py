"""Kata: BatchNorm1d and BatchNorm2d from scratch.

What it is
----------
Batch normalization (Ioffe & Szegedy, 2015) standardizes every channel with statistics taken
across the mini-batch (and across the spatial/temporal positions), then applies a learnable
per-channel scale and shift. It made deep CNNs (ResNet, VGG-BN, EfficientNet, ...) much easier
to train: larger learning rates, less sensitivity to initialisation, a mild regularising
effect. Because the statistics come from the batch, the layer needs running estimates for
inference, and it is a poor fit for tiny batches and variable-length sequences (where
LayerNorm is used instead).

The maths
---------
For each channel c, over the m = N·L (1d) or m = N·H·W (2d) values of that channel:

    μ_c  = (1/m) · Σ x                      batch mean
    σ²_c = (1/m) · Σ (x − μ_c)²             biased batch variance: used to normalize
    x̂    = (x − μ_c) / √(σ²_c + ε)
    y    = γ_c · x̂ + β_c                    γ = weight, β = bias, both of shape (C,)

Running estimates, updated in training mode only (m/(m − 1) makes the variance unbiased):

    running_mean ← (1 − momentum) · running_mean + momentum · μ_c
    running_var  ← (1 − momentum) · running_var  + momentum · σ²_c · m/(m − 1)
    num_batches_tracked ← num_batches_tracked + 1

Note the convention: torch's momentum is the weight of the *new* observation, the opposite of
the β in an optimizer's EMA.

Shapes
------
    BatchNorm1d: input (N, C) or (N, C, L)      BatchNorm2d: input (N, C, H, W)
    output: same shape and dtype as the input
    weight, bias, running_mean, running_var: (C,)      num_batches_tracked: () of dtype long

The contract (interview core)
-----------------------------
* ``BatchNorm1d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True)``
  and ``BatchNorm2d`` alike; keep the five arguments as attributes of the same names.
* Parameters ``weight`` (ones) and ``bias`` (zeros) of shape (C,), ``None`` with
  ``affine=False``; buffers ``running_mean`` (zeros), ``running_var`` (ones) and
  ``num_batches_tracked`` (``torch.tensor(0, dtype=torch.long)``) via ``register_buffer``, so
  that a ``torch.nn`` state_dict loads into yours and back.
* Training: normalize with the batch statistics and update the running ones as above, without
  autograd history. Eval: normalize with the running statistics and leave them unchanged.
* The output has x's shape, dtype and device; gradients flow by plain autograd.

Torch parity (stretch)
----------------------
* A float64 input is computed in float64, running statistics included: torch computes in
  float32 only for half inputs.
* ``momentum=None``: the factor is 1/num_batches_tracked (read after the increment), a
  cumulative average that weighs every batch equally.
* ``track_running_stats=False``: the three buffers are ``None`` and batch statistics are used
  in both modes.
* Errors, as torch raises them: ``ValueError("expected 2D or 3D input (got 4D input)")`` for
  BatchNorm1d, ``ValueError("expected 4D input (got 3D input)")`` for BatchNorm2d; and one
  value per channel (N·L or N·H·W == 1) wherever batch statistics are used, in training or in
  eval with ``track_running_stats=False``: ``ValueError("Expected more than 1 value per channel
  when training, got input size ...")``.
* An empty batch (N = 0) returns an empty output; in training torch still increments
  ``num_batches_tracked`` and leaves the running averages untouched (no NaN).
* A float32 layer fed float16/bfloat16 input (as under autocast) returns the input's dtype.

Pitfalls interviewers probe
---------------------------
* Which dims: every dim except the channel dim 1, i.e. (0,) for (N, C), (0, 2) for
  (N, C, L), (0, 2, 3) for (N, C, H, W). Reshape γ, β and the statistics so they broadcast
  along dim 1.
* Biased variance to normalize, unbiased variance for ``running_var``. Why?
* Direction of momentum: new = (1 − m)·old + m·batch, not the other way round.
* Update the buffers under ``torch.no_grad()`` (or from detached values): a running statistic
  that carries autograd history chains every step's graph to the next one: memory grows, and
  a later backward through it (e.g. from an eval-mode output) fails with "Trying to backward
  through the graph a second time".
* Prefer in-place updates (``mul_``, ``add_``, ``copy_``): they keep the same tensor object,
  which code holding a reference to the buffer relies on (DDP buffer sync, CUDA graphs).
* train() vs eval(): ``self.training`` decides which statistics are used.
* Why BatchNorm breaks with batch size 1, and why a layer right before it needs no bias.
* Upcast only half inputs: ``x.float()`` would also round a float64 input to float32.

"From scratch" rules
--------------------
Use tensor operations: mean, var, sum, square, rsqrt, view/reshape, in-place mul_/add_, ...
Do not call the built-in layer or its functional form: ``F.batch_norm``, ``torch.batch_norm``,
``torch.native_batch_norm``, ``nn.BatchNorm1d/2d``, nor ``F.instance_norm`` /
``F.group_norm`` / ``F.layer_norm`` tricks. The grader detects such calls at run time.

You may put the shared logic in ``_BatchNorm`` (as torch does in ``_NormBase``/``_BatchNorm``)
and let the two public classes only check the input rank, or write the two classes in full.

Grade yourself with::

    nox -s kata-batchnorm
"""

from __future__ import annotations

import torch
from torch import nn


class _BatchNorm(nn.Module):
    r"""Shared base: per-channel batch normalization with running statistics.

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} * \gamma + \beta

    Args:
        num_features: :math:`C`, the number of channels (dim 1 of the input).
        eps: a value added to the variance for numerical stability. Default: 1e-5
        momentum: weight of the new batch statistic in the running averages; ``None`` for a
            cumulative moving average. Default: 0.1
        affine: if ``True``, learnable per-channel ``weight`` (ones) and ``bias`` (zeros).
            Default: ``True``
        track_running_stats: if ``True``, keep ``running_mean``, ``running_var`` and
            ``num_batches_tracked`` buffers and use them in eval mode; if ``False``, the
            buffers are ``None`` and batch statistics are used in both modes. Default: ``True``
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ) -> None:
        super().__init__()
        raise NotImplementedError(
            "TODO: store the hyper-parameters; register weight/bias and the running-stat buffers"
        )

    def _check_input_dim(self, x: torch.Tensor) -> None:
        raise NotImplementedError("TODO: raise ValueError for an input of the wrong rank")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: implement forward")


class BatchNorm1d(_BatchNorm):
    r"""Applies Batch Normalization over a 2D or 3D input.

    Args: see :class:`_BatchNorm`.

    Shape:
        - Input: :math:`(N, C)` or :math:`(N, C, L)`
        - Output: same shape as the input
    """

    def _check_input_dim(self, x: torch.Tensor) -> None:
        raise NotImplementedError("TODO: accept only 2D or 3D inputs")


class BatchNorm2d(_BatchNorm):
    r"""Applies Batch Normalization over a 4D input.

    Args: see :class:`_BatchNorm`.

    Shape:
        - Input: :math:`(N, C, H, W)`
        - Output: same shape as the input
    """

    def _check_input_dim(self, x: torch.Tensor) -> None:
        raise NotImplementedError("TODO: accept only 4D inputs")
