"""Kata: SyncBatchNorm, BatchNorm over the batch of every GPU.

What it is
----------
Data-parallel training splits a batch of 32 over 8 GPUs, 4 samples each. Plain BatchNorm then
normalizes every GPU's 4 samples with their own mean and variance: noisy statistics, which
hurt most where the per-GPU batch is tiny (detection, segmentation, video, large models).
SyncBatchNorm (torch.nn.SyncBatchNorm) normalizes with the statistics of the *global* batch,
all ranks together, as if the 32 samples sat on one GPU. The ranks exchange a few numbers per
channel through torch.distributed collectives, in forward and again in backward.

The maths
---------
Rank r holds n_r values of channel c (N·H·W of them for an image batch); N = Σ_r n_r.

    mean = Σ_r Σ x / N                                  the global mean
    var  = Σ_r Σ (x − mean)² / N                        the global biased variance
         = Σ_r [M2_r + n_r · (mean_r − mean)²] / N      from each rank's count, mean_r and
                                                        M2_r = Σ (x − mean_r)² (Chan et al.)
    x̂    = (x − mean) / √(var + ε),     y = γ_c · x̂ + β_c

Running statistics, updated in training on every rank alike (N / (N − 1): the global count):

    running_mean ← (1 − momentum) · running_mean + momentum · mean
    running_var  ← (1 − momentum) · running_var  + momentum · var · N / (N − 1)

Backward: mean and var depend on every rank's x, so the input gradient needs global sums,

    grad_x = γ / √(var + ε) · (dy − Σ dy / N − x̂ · Σ (dy · x̂) / N)      sums over all ranks

while grad_γ = Σ dy · x̂ and grad_β = Σ dy stay each rank's own (DDP all-reduces parameters).

Shapes
------
    input (N, C, *): (N, C), (N, C, L), (N, C, H, W), (N, C, D, H, W); output: the same
    weight, bias, running_mean, running_var: (C,)      num_batches_tracked: () long

The contract (interview core)
-----------------------------
* ``SyncBatchNorm(num_features, eps=1e-5, momentum=0.1, affine=True,
  track_running_stats=True, process_group=None)``, attributes of the same names. Parameters
  ``weight`` (ones) and ``bias`` (zeros), None with ``affine=False``; buffers
  ``running_mean``, ``running_var``, ``num_batches_tracked`` as in BatchNorm (None when not
  tracking). state_dicts load to and from ``nn.SyncBatchNorm`` and ``nn.BatchNorm2d``.
* Training, with torch.distributed initialised (``dist.is_available() and
  dist.is_initialized()``) and more than one rank in the group: normalize with the global
  batch's mean and biased variance, gathered through collectives over ``process_group``
  (None: the default group, every rank). Ranks may have batches of different sizes, a batch
  of one sample included. Update the running statistics on every rank, with the global
  unbiased variance.
* Gradients: the input's gradient is that of BatchNorm on the global batch (a collective in
  backward: an ``autograd.Function``, or differentiable collectives such as
  ``torch.distributed.nn.functional.all_reduce``); ``weight.grad``/``bias.grad`` are the
  rank's own share.
* Every rank makes the same collective calls in the same order, and sends per-channel
  statistics (O(C) values), not activations.
* Eval mode: the running statistics, locally, no collective. Without a process group (one
  process): plain BatchNorm, in both modes.

Torch parity (stretch)
----------------------
* A float64 input is computed in float64 on every rank, statistics and collectives included.
* A rank with an empty batch (N = 0) still joins the collectives, adds no NaN, returns an
  empty output and updates its running statistics with the global ones.
* ``momentum=None``: a cumulative average, factor 1 / num_batches_tracked.
* ``track_running_stats=False``: synchronised in training; in eval, the local batch's own
  statistics and no collective.

Pitfalls interviewers probe
---------------------------
* The average of the ranks' variances is not the global variance: it misses the spread of
  the rank means around the global mean. And the average of the rank means is wrong when the
  batches differ in size: synchronise the counts with the sums.
* Normalize with the biased variance; the unbiased one (global N − 1) is for running_var.
* ``dist.all_reduce`` is invisible to autograd: an all-reduced sum in forward gives each rank a
  gradient with only its own terms. Backward needs its own collective.
* A collective that some ranks skip (``if rank == 0:``, an early return on an empty batch)
  hangs the others forever.
* Does eval synchronise? What does DDP already do with weight.grad?

"From scratch" rules
--------------------
Tensor operations and torch.distributed collectives. Not ``F.batch_norm`` (nor torch's other
norms), ``nn.SyncBatchNorm``, or the kernels of torch's SyncBatchNorm
(``torch.batch_norm_stats``, ``batch_norm_gather_stats_with_counts``, ``batch_norm_elemt``,
``batch_norm_backward_reduce``, ...), in any mode. The grader detects such calls at run time.
It runs your layer on four ranks at once (processes joined by gloo on 127.0.0.1, or nccl on
GPUs) and stops a rank that waits for a collective the others never make.

Grade yourself with::

    nox -s kata-syncbatchnorm
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn


class SyncBatchNorm(nn.Module):
    r"""Applies Batch Normalization over an (N, C, \*) input, with the statistics of the batch
    of every rank of ``process_group`` in training.

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} * \gamma + \beta

    Args:
        num_features: :math:`C`, the number of channels (dim 1 of the input).
        eps: a value added to the variance for numerical stability. Default: 1e-5
        momentum: weight of the new statistic in the running averages; ``None`` for a
            cumulative moving average. Default: 0.1
        affine: if ``True``, learnable per-channel ``weight`` (ones) and ``bias`` (zeros).
            Default: ``True``
        track_running_stats: if ``True``, keep ``running_mean``, ``running_var`` and
            ``num_batches_tracked`` and use them in eval mode. Default: ``True``
        process_group: the ranks whose batches form the global batch; ``None`` for the
            default group (every rank). Default: ``None``

    Shape:
        - Input: :math:`(N, C, *)`
        - Output: same shape as the input
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: dist.ProcessGroup | None = None,
    ) -> None:
        super().__init__()
        raise NotImplementedError(
            "TODO: store the arguments; register weight/bias and the running-stat buffers"
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError(
            "TODO: local BatchNorm in eval or without a process group; in training, normalize "
            "with the statistics of every rank's batch (and a collective in backward)"
        )
