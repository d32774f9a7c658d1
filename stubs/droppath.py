"""Kata: DropPath (stochastic depth) from scratch.

What it is
----------
Stochastic depth (Huang et al., 2016) randomly skips whole residual branches during training:
in ``x + drop_path(branch(x))`` a dropped sample keeps only its identity path, as if that
block did not exist for it. Each sample of the batch decides on its own. A deep network then
trains as an ensemble of shallower ones, which regularizes it and shortens the gradient path;
at inference every block is used. Vision Transformers (DeiT, Swin), ConvNeXt and EfficientNet
train with it, through timm's ``DropPath``, usually with a drop rate that grows with depth.

The maths
---------
    training:  bₙ ~ Bernoulli(1 − p)  (1 = keep), one draw per sample n
               yₙ = bₙ · xₙ / (1 − p)      (scale_by_keep=True)
               yₙ = bₙ · xₙ                (scale_by_keep=False)
    eval, or p = 0:  y = x

Shapes
------
    input: (N, *), any rank from 1 on, samples along dim 0
    output: same shape, dtype and device as the input

The contract (interview core)
-----------------------------
* ``drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True)`` and
  ``DropPath(drop_prob=0.0, scale_by_keep=True)`` (attributes ``drop_prob`` and
  ``scale_by_keep``; no parameters, no buffers), whose forward calls ``drop_path`` with
  ``self.training``.
* Training: each sample is kept or dropped *as a whole*, independently, with a fresh draw from
  torch's random generator on every call; survivors are scaled by 1/(1 − p) when
  ``scale_by_keep``. ``drop_prob = 1`` gives zeros, never NaN, in the output and in the
  gradient: x times a zero mask, so that the output stays in autograd's graph (a new
  ``torch.zeros_like(x)`` has no gradient at all).
* Eval (or ``training=False``) and ``drop_prob = 0``: the identity.
* The output has x's shape, dtype and device; x itself is left as it was.

Torch parity (stretch)
----------------------
* A float64 input is computed in float64, not rounded through float32.
* float16/bfloat16 inputs give the same dtype back: the mask follows x's dtype.
* A non-contiguous input (a transposed or sliced view) is dropped like any other, as timm's
  DropPath takes it.

Pitfalls interviewers probe
---------------------------
* One draw per sample, shape (N, 1, ..., 1): a mask of x's full shape is Dropout, and a mask
  of shape (1, ...) drops the whole batch at once.
* Scale by the keep probability 1 − p, not by p; never in eval.
* drop_prob = 1: 1/(1 − p) is 1/0.
* The mask on x's device and in x's dtype, from torch's generator (not Python's random).
* Why DropPath on the residual branch and not on the identity path, and what it does to the
  expected depth of the network.

"From scratch" rules
--------------------
Use tensor operations: torch.rand, bernoulli, comparisons, multiplication, ... Do not call
built-in dropouts (``F.dropout``, ``torch.dropout``, ``nn.Dropout``, ...) or torchvision's
``stochastic_depth``. The grader detects such calls at run time. It also runs your module on
a simulated GPU, where in-place random fills on a fresh tensor sometimes cannot run (that check
is then skipped): out-of-place draws such as ``torch.rand(shape, device=x.device)`` can.

Grade yourself with::

    nox -s kata-droppath
"""

from __future__ import annotations

import torch
from torch import nn


def drop_path(
    x: torch.Tensor, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True
) -> torch.Tensor:
    """Drop whole samples (dim 0) of ``x`` with probability ``drop_prob`` when training.

    Args:
        x: the output of a residual branch, samples along dim 0.
        drop_prob: probability of dropping a sample. Default: 0.0
        training: apply the drop (``False``: return ``x``). Default: ``False``
        scale_by_keep: divide the survivors by ``1 - drop_prob``. Default: ``True``
    """
    raise NotImplementedError("TODO: implement drop_path")


class DropPath(nn.Module):
    r"""Drop paths (stochastic depth) per sample, when applied in the main path of residual blocks.

    Args:
        drop_prob: probability of dropping a sample. Default: 0.0
        scale_by_keep: divide the survivors by ``1 - drop_prob``. Default: ``True``

    Shape:
        - Input: :math:`(N, *)`
        - Output: :math:`(N, *)`, same shape as the input
    """

    def __init__(self, drop_prob: float = 0.0, scale_by_keep: bool = True) -> None:
        super().__init__()
        raise NotImplementedError("TODO: store drop_prob and scale_by_keep")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: call drop_path with self.training")
